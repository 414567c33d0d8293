/**
 * A run's event-loop blocks on disk (recording.ts BLOCKS_FILE): every block counted in run.json,
 * the longest MAX_KEPT of them with their stacks in blocks.json, rewritten whole and atomically
 * when blocks came, at most once a second and at the end. The file counts in the run's bytes and
 * grows only where the caps leave room; past them, blocks are still counted.
 */
import path from 'node:path';
import type { Block, BlockFrame } from '../../blocks/block.js';
import type { Logger } from '../../log.js';
import { BLOCKS_FILE, type RecordedBlock, type RecordedBlocks } from '../../recording.js';
import { writeFileAtomicSync } from '../../util/atomic-file.js';
import { Interner } from '../../util/interner.js';
import type { RunCaps } from './run-caps.js';
import type { RunManifest } from './run-manifest.js';
import type { WriteGuard } from './write-guard.js';

/** Blocks kept with their stacks: the longest, which are the ones to look at first. */
export const MAX_KEPT = 200;
/** At most one rewrite of the file per this long. */
const WRITE_EVERY_MS = 1000;

/** `kept` with `block` in its place, longest first, at most `max`. */
export function keepLongest(kept: readonly Block[], block: Block, max: number): Block[] {
  const at = kept.findIndex((other) => other.durationMs < block.durationMs);
  const next = at < 0 ? [...kept, block] : [...kept.slice(0, at), block, ...kept.slice(at)];
  return next.slice(0, max);
}

/** The file's content: the blocks' frames in one table, each block's stacks pointing into it. */
export function recordedBlocks(blocks: readonly Block[]): RecordedBlocks {
  const ids = new Interner<string>();
  const frames: BlockFrame[] = [];
  const frameId = (frame: BlockFrame): number => {
    const id = ids.id(`${frame.name}\0${frame.file}\0${frame.line}`);
    if (id === frames.length) frames.push(frame);
    return id;
  };
  const recorded = blocks.map(
    (block): RecordedBlock => ({
      startedAt: new Date(block.startedAt).toISOString(),
      durationMs: Math.round(block.durationMs * 10) / 10,
      // Down, not to the nearest: the report judges the block from this figure (heldByApp against a
      // whole-millisecond threshold), and 99.96 ms read as 100.0 would turn the agent's verdict.
      ranMs: Math.floor(block.ranMs * 10) / 10,
      span: block.span ?? null,
      samples: block.samples,
      spanSamples: block.spanSamples,
      stacks: block.stacks.map((stack) => ({ ...stack, frames: stack.frames.map((id) => frameId(block.frames[id]!)) })),
      heaviest: block.heaviest,
    }),
  );
  return { frames, blocks: recorded };
}

export class BlockFile {
  private kept: Block[] = [];
  /** What the file holds on disk now. */
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private lastWriteAt = Number.NEGATIVE_INFINITY;
  private changed = false;

  constructor(
    private readonly dir: string,
    private readonly manifest: RunManifest,
    private readonly caps: RunCaps,
    private readonly guard: WriteGuard,
    private readonly log: Logger,
  ) {}

  /** The run watches blocks of `thresholdMs` or longer: run.json says so, none found yet. */
  watched(thresholdMs: number): void {
    this.manifest.data.blocks ??= { thresholdMs, count: 0 };
  }

  add(block: Block): void {
    this.manifest.data.blocks ??= { thresholdMs: block.thresholdMs, count: 0 };
    this.manifest.data.blocks.count++;
    const kept = keepLongest(this.kept, block, MAX_KEPT);
    if (!kept.includes(block)) return;
    this.kept = kept;
    this.changed = true;
    if (performance.now() - this.lastWriteAt >= WRITE_EVERY_MS) this.write();
    else this.timer ??= setTimeout(() => this.write(), WRITE_EVERY_MS).unref();
  }

  /** The file as the blocks stand, if they changed since it was written (the caller writes run.json). */
  write(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.changed || this.guard.broken || this.guard.paused()) return;
    this.changed = false;
    this.lastWriteAt = performance.now();
    const body = Buffer.from(`${JSON.stringify(recordedBlocks(this.kept))}\n`);
    const growth = body.byteLength - this.bytes;
    const room = growth <= 0 ? true : this.caps.fits(growth);
    if (room !== true) {
      this.log.warnOnce('cap-blocks', `the recording reached ${room}; event-loop blocks past it are counted in run.json, not kept in ${BLOCKS_FILE}`);
      return;
    }
    this.guard.run(() => {
      writeFileAtomicSync(path.join(this.dir, BLOCKS_FILE), body);
      this.manifest.counts.bytes += growth;
      this.bytes = body.byteLength;
      this.manifest.write();
    });
  }
}
