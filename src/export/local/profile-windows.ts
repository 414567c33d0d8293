import path from 'node:path';
import { nodeFs } from '../../util/builtins.js';
import type { ProfileType } from '../../config/index.js';
import { type Logger, reason } from '../../log.js';
import { PROFILES_DIR, profileFileName } from '../../recording.js';
import { removeQuietly, writeFileAtomicSync } from '../../util/atomic-file.js';
import type { EncodedProfile } from '../../profiling/window-encoder.js';
import { fits, mergeSaves, nextWindowStep, type Tried } from './disk-budget.js';
import type { MergeThread } from './merge-thread.js';
import type { Cap, RunCaps } from './run-caps.js';
import type { RunManifest } from './run-manifest.js';
import { type MergedProfile, mergeWindowParts, type WindowPart } from './window-merge.js';
import type { WriteGuard } from './write-guard.js';

interface WindowOnDisk {
  seq: number;
  files: { type: ProfileType; file: string; bytes: number }[];
  bytes: number;
}

/** A window waiting to be written, and what was tried to make room for it. */
interface Incoming extends Tried {
  seq: number;
  profiles: EncodedProfile[];
  bytes: number;
}

/** A merge made for the incoming window: `older` (at `at` on disk) with `newer`, or, when there is none, with the incoming window. */
interface Merge {
  at: number;
  older: WindowOnDisk;
  newer: WindowOnDisk | undefined;
  parts: WindowPart[];
}

export interface ProfileWindowParts {
  dir: string;
  manifest: RunManifest;
  caps: RunCaps;
  guard: WriteGuard;
  merger: MergeThread;
  log: Logger;
}

/**
 * The run's profile windows on disk: each window's gzipped pprof files, whole or not at all,
 * counted in run.json, under the run's cap by the steps disk-budget.ts picks (merge, delete the
 * oldest, or drop the window). Merges run in the merge thread (merge-thread.ts) while the app goes
 * on: windows that come meanwhile wait in line, in memory, and run.json says what is on disk while
 * they wait. At exit and at the heap limit, where no merge can be waited for, the line is written
 * at once, merging on this thread; a merge under way is then given up (its windows are planned
 * again), as the merge thread only reads.
 */
export class ProfileWindows {
  /** Oldest first. */
  private readonly onDisk: WindowOnDisk[] = [];
  /** Oldest first: the first waits for `merging` when there is one. */
  private readonly line: Incoming[] = [];
  private merging: Merge | undefined;
  private lastSeq = 0;
  private readonly whenIdle: (() => void)[] = [];

  constructor(private readonly parts: ProfileWindowParts) {}

  /** The number of the last window taken, written or not. */
  get last(): number {
    return this.lastSeq;
  }

  /** Writes a window after those in line; without profiles there is nothing to write. */
  add(profiles: EncodedProfile[]): void {
    if (this.take(profiles)) this.pump();
  }

  /** Writes the windows in line and then `more`, now, merging on this thread. */
  writeAllSync(more: EncodedProfile[][] = []): void {
    this.merging = undefined;
    for (const profiles of more) this.take(profiles);
    for (let next = this.line.shift(); next !== undefined; next = this.line.shift()) {
      const incoming = next;
      this.parts.guard.run(() => this.writeHere(incoming));
    }
    this.wakeIfIdle();
  }

  /**
   * Resolves once no window waits, or at `deadlineAt`: the final flush waits for the merges under
   * way (its timer holds the process that long at most).
   */
  settle(deadlineAt: number): Promise<void> {
    if (this.line.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, deadlineAt - Date.now()));
      this.whenIdle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private take(profiles: EncodedProfile[]): boolean {
    if (profiles.length === 0) return false;
    const bytes = profiles.reduce((sum, p) => sum + p.body.byteLength, 0);
    this.line.push({ seq: ++this.lastSeq, profiles, bytes, intoOnly: false, mergeRefused: false });
    return true;
  }

  /** Writes the windows in line until one waits for a merge in the merge thread. */
  private pump(): void {
    while (this.merging === undefined && this.line.length > 0) {
      const incoming = this.line[0]!;
      let merge: Merge | undefined;
      this.parts.guard.run(() => void (merge = this.advance(incoming)));
      if (merge === undefined) this.line.shift();
      else this.mergeInThread(incoming, merge);
    }
    this.wakeIfIdle();
  }

  private mergeInThread(incoming: Incoming, merge: Merge): void {
    this.merging = merge;
    // What was evicted or merged for this window so far is on disk: run.json says so while the merge runs.
    this.parts.guard.run(() => this.parts.manifest.write());
    this.parts.merger.merge(merge.parts).then(
      (merged) => this.merged(incoming, merge, merged),
      (error: unknown) => this.merged(incoming, merge, this.mergeFailed(merge, error)),
    );
  }

  private merged(incoming: Incoming, merge: Merge, merged: MergedProfile[] | undefined): void {
    // Given up: the windows were written on this thread meanwhile.
    if (this.merging !== merge) return;
    this.merging = undefined;
    let done = false;
    // A write that failed ends this window's turn, as it does when the window itself cannot be written.
    if (!this.parts.guard.run(() => void (done = this.keep(incoming, merge, merged))) || done) this.line.shift();
    this.pump();
  }

  /** Writes `incoming` now, its merges made on this thread. */
  private writeHere(incoming: Incoming): void {
    for (let merge = this.advance(incoming); merge !== undefined; merge = this.advance(incoming)) {
      let merged: MergedProfile[] | undefined;
      try {
        merged = mergeWindowParts(merge.parts);
      } catch (error) {
        merged = this.mergeFailed(merge, error);
      }
      if (this.keep(incoming, merge, merged)) return;
    }
  }

  /**
   * Takes the steps disk-budget.ts picks for `incoming` until it is written or dropped
   * (undefined), or a merge is to be made (returned).
   */
  private advance(incoming: Incoming): Merge | undefined {
    for (;;) {
      const cap = this.parts.caps.forGrowth(incoming.bytes);
      const step = nextWindowStep(
        { windows: this.onDisk.map((w) => w.bytes), used: this.parts.manifest.counts.bytes, cap: cap.bytes },
        incoming.bytes,
        incoming,
      );
      incoming.mergeRefused = false;
      switch (step.step) {
        case 'write':
          this.write(incoming);
          return undefined;
        case 'drop':
          this.drop(incoming, cap);
          return undefined;
        case 'evict':
          this.evictOldest(cap);
          break;
        case 'merge-into-only': {
          incoming.intoOnly = true;
          const older = this.onDisk[0]!;
          return { at: 0, older, newer: undefined, parts: [...partsOf(older), ...incoming.profiles.map(({ type, body }) => ({ type, body }))] };
        }
        case 'merge': {
          const [older, newer] = [this.onDisk[step.at]!, this.onDisk[step.at + 1]!];
          return { at: step.at, older, newer, parts: [...partsOf(older), ...partsOf(newer)] };
        }
      }
    }
  }

  /**
   * Keeps a merge's result when it saves room (and, for the incoming window, fits): it replaces
   * the older window's files, every time range kept with less detail. True when it took the
   * incoming window in, which is then recorded. A merge refused, failed or outdated leaves the
   * disk as it was.
   */
  private keep(incoming: Incoming, merge: Merge, merged: MergedProfile[] | undefined): boolean {
    const { at, older, newer } = merge;
    // Outdated (the disk changed meanwhile): planned again.
    if (this.onDisk[at] !== older || this.onDisk[at + 1] !== newer) return false;
    const { manifest, caps } = this.parts;
    const bytes = merged?.reduce((sum, p) => sum + p.body.byteLength, 0) ?? Number.POSITIVE_INFINITY;
    const growth = bytes - older.bytes;
    if (
      merged === undefined ||
      !mergeSaves(older.bytes, newer?.bytes ?? incoming.bytes, bytes) ||
      (newer === undefined && !fits({ used: manifest.counts.bytes, cap: caps.forGrowth(growth).bytes }, growth))
    ) {
      incoming.mergeRefused = newer !== undefined;
      return false;
    }
    const files = merged.map(({ type, body }) => ({ type, file: this.fileOf(older.seq, type), bytes: body.byteLength }));
    merged.forEach(({ body }, i) => {
      writeFileAtomicSync(files[i]!.file, body);
    });
    const { counts } = manifest;
    counts.bytes += growth;
    counts.profileFiles += files.length - older.files.length;
    counts.thinnedWindows++;
    this.parts.log.warnOnce(
      'cap-thin',
      `the recording reached its cap; older profile windows are merged to make room: their samples keep their endpoint, not their span (counted in run.json)`,
    );
    const thinned = { seq: older.seq, files, bytes };
    if (newer === undefined) {
      this.onDisk.splice(at, 1, thinned);
      counts.windows++;
      manifest.write();
      return true;
    }
    for (const { file } of newer.files) nodeFs().unlinkSync(file);
    this.onDisk.splice(at, 2, thinned);
    counts.profileFiles -= newer.files.length;
    counts.bytes -= newer.bytes;
    return false;
  }

  private write(incoming: Incoming): void {
    const { counts } = this.parts.manifest;
    const files: WindowOnDisk['files'] = [];
    try {
      for (const { type, body } of incoming.profiles) {
        const file = this.fileOf(incoming.seq, type);
        writeFileAtomicSync(file, body);
        files.push({ type, file, bytes: body.byteLength });
      }
    } catch (error) {
      // A window is on disk whole or not at all: its cpu file without its wall file would be counted by no one.
      for (const { file } of files) removeQuietly(file);
      counts.droppedWindows++;
      throw error;
    }
    this.onDisk.push({ seq: incoming.seq, files, bytes: incoming.bytes });
    counts.windows++;
    counts.profileFiles += files.length;
    counts.bytes += incoming.bytes;
    this.parts.manifest.write();
  }

  private drop(incoming: Incoming, cap: Cap): void {
    this.parts.manifest.counts.droppedWindows++;
    this.parts.log.warnOnce(
      'cap-window-too-big',
      `a profile window (${incoming.bytes} bytes) is larger than the room left under ${cap.words}; it is not recorded (counted in run.json)`,
    );
    this.parts.manifest.write();
  }

  private evictOldest(cap: Cap): void {
    const oldest = this.onDisk.shift()!;
    for (const { file } of oldest.files) nodeFs().unlinkSync(file);
    const { counts } = this.parts.manifest;
    counts.bytes -= oldest.bytes;
    counts.profileFiles -= oldest.files.length;
    counts.droppedWindows++;
    this.parts.log.warnOnce(
      cap.byTotal ? 'total-cap-windows' : 'cap-windows',
      `the recording reached ${cap.words}; the oldest profile windows are deleted to make room (counted in run.json)`,
    );
  }

  /** A merge that failed (a file that does not decode) saves nothing: said at debug level. */
  private mergeFailed(merge: Merge, error: unknown): undefined {
    this.parts.log.debug(`could not merge profile window ${merge.older.seq} with a newer one: ${reason(error)}`);
    return undefined;
  }

  private fileOf(seq: number, type: ProfileType): string {
    return path.join(this.parts.dir, PROFILES_DIR, profileFileName(seq, type));
  }

  private wakeIfIdle(): void {
    if (this.line.length > 0) return;
    for (const wake of this.whenIdle.splice(0)) wake();
  }
}

function partsOf(window: WindowOnDisk): WindowPart[] {
  return window.files.map(({ type, file }) => ({ type, file }));
}
