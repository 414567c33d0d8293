import path from 'node:path';
import { megabytes } from '../../config/index.js';
import type { Logger } from '../../log.js';
import { bindingCap, fits, SPAN_SHARE_OF_CAP, spanRoom } from './disk-budget.js';
import { TotalCap } from './run-retention.js';
import type { RunManifest } from './run-manifest.js';

/** The cap that binds a run's growth, and how a warning names it. */
export interface Cap {
  bytes: number;
  byTotal: boolean;
  words: string;
}

/**
 * The caps a run's files grow under, as they stand: its own (--max-run-size) and the room the
 * output folder's total cap leaves it (TotalCap, --max-total-size, which deletes older finished
 * runs first), run.json's room kept aside. The numbers are disk-budget.ts's to weigh.
 */
export class RunCaps {
  private readonly total: TotalCap;

  constructor(
    baseDir: string,
    private readonly dir: string,
    totalCapBytes: number,
    private readonly manifest: RunManifest,
    log: Logger,
  ) {
    this.total = new TotalCap(baseDir, path.basename(dir), totalCapBytes, log);
    this.total.room(manifest.ownBytes());
  }

  /** The cap that binds when the run's files grow by `bytes`. */
  forGrowth(bytes: number): Cap {
    const { counts, capBytes } = this.manifest.data;
    const manifestRoom = this.manifest.room();
    const cap = bindingCap(capBytes, this.total.room(counts.bytes + manifestRoom + bytes) - manifestRoom);
    const words = cap.byTotal
      ? `the ${megabytes(this.total.capBytes)} total cap of the recordings in ${path.dirname(this.dir)} (--max-total-size), which other runs still recording take their share of`
      : `its ${megabytes(capBytes)} cap`;
    return { ...cap, words };
  }

  /** True when the run's files may grow by `bytes` as they are; else the cap that stops them, in words. */
  fits(bytes: number): true | string {
    const cap = this.forGrowth(bytes);
    return fits({ used: this.manifest.counts.bytes, cap: cap.bytes }, bytes) || cap.words;
  }

  /** Room left for span files, which hold `spanBytes`, and the limit that binds, in words. */
  forSpans(spanBytes: number): { left: number; limit: string } {
    const { counts, capBytes } = this.manifest.data;
    const room = spanRoom(capBytes, spanBytes, counts.bytes, this.manifest.room());
    return {
      left: room.left,
      limit: room.byShare ? `the ${megabytes(capBytes * SPAN_SHARE_OF_CAP)} of its cap that spans may take` : `its ${megabytes(capBytes)} cap`,
    };
  }

  /** At the end: the removals of older runs still under way are finished. */
  settle(): void {
    this.total.settle();
  }
}
