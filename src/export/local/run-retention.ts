import path from 'node:path';
import { nodeFs } from '../../util/builtins.js';
import { megabytes } from '../../config/index.js';
import { type Logger, reason } from '../../log.js';
import { DELETING_PREFIX } from '../../recording.js';
import { removeQuietly } from '../../util/atomic-file.js';
import { isRunning, pidAlive, pidNamespace, type Vantage } from './run-liveness.js';
import { listRuns, readRun, type RunOnDisk } from './runs-on-disk.js';

/**
 * Finished runs kept at most, whatever their size. A crash loop makes runs of a few kilobytes:
 * under the size cap alone tens of thousands pile up, each costing the file system blocks its
 * size does not show, and each start would read all their manifests before the app runs.
 */
export const MAX_FINISHED_RUNS = 500;
/** How often, at most, the output folder is read again while other runs are recording into it. */
const RESCAN_MS = 30_000;

export interface Limits {
  capBytes: number;
  maxFinishedRuns: number;
}

/** A run as the total cap weighs it. */
export interface WeighedRun {
  name: string;
  startedAtMs: number;
  bytes: number;
  running: boolean;
}

/**
 * The runs to delete, in order: the oldest finished ones (by start, then name), until the rest
 * plus `ownBytes` fit under the cap and at most `maxFinishedRuns` finished ones are left. Running
 * runs are never chosen, though they count: when they alone fill the cap, the list is every
 * finished run, and the caller's own run gets what is left (possibly nothing).
 */
export function runsToDelete<T extends WeighedRun>(runs: readonly T[], ownBytes: number, limits: Limits): T[] {
  const finished = runs.filter((run) => !run.running).sort((a, b) => a.startedAtMs - b.startedAtMs || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let total = runs.reduce((sum, run) => sum + run.bytes, ownBytes);
  let left = finished.length;
  const doomed: T[] = [];
  for (const run of finished) {
    if (total <= limits.capBytes && left <= limits.maxFinishedRuns) break;
    doomed.push(run);
    total -= run.bytes;
    left--;
  }
  return doomed;
}

/**
 * Local mode's bound on the whole output folder: the recordings in it, this run's included, stay
 * under `capBytes` and MAX_FINISHED_RUNS finished runs. The oldest finished runs are deleted first;
 * running ones never (see isRunning); folders and files that are not recordings are neither
 * counted nor touched. The folder is read once at start and again, at most every RESCAN_MS, when
 * other runs were recording at the last reading or the folder's entries changed. Deleting is a
 * rename to a hidden name (the run is gone at once, for readers too) and a removal in the
 * background; what is still being removed at exit is removed then. Never throws.
 */
export class TotalCap {
  private runs: (RunOnDisk & { running: boolean })[] = [];
  /** When the folder was last read (performance.now(): a clock step moves no rescan). */
  private scannedAt: number | undefined;
  private folderMtimeMs = 0;
  private readonly removing = new Set<string>();
  private removals = 0;

  constructor(
    private readonly baseDir: string,
    private readonly own: string,
    readonly capBytes: number,
    private readonly log: Logger,
  ) {}

  /**
   * The bytes this run may hold: the cap less the other runs. When `ownBytes` would not fit, the
   * oldest finished runs are deleted first. Infinity when the folder cannot be read.
   */
  room(ownBytes: number): number {
    try {
      if (this.scanDue()) this.scan();
      const limits = { capBytes: this.capBytes, maxFinishedRuns: MAX_FINISHED_RUNS };
      let deleted = 0;
      let freed = 0;
      // Again when a run could not be deleted (gone meanwhile, or a rename refused): the next one goes instead.
      for (let plan = runsToDelete(this.runs, ownBytes, limits); plan.length > 0; plan = runsToDelete(this.runs, ownBytes, limits)) {
        const planned = new Set(plan);
        this.runs = this.runs.filter((run) => !planned.has(run));
        for (const run of plan) {
          const bytes = this.remove(run.name);
          if (bytes === undefined) continue;
          deleted++;
          freed += bytes;
        }
      }
      if (deleted > 0) {
        this.log.warnOnce(
          'total-cap',
          `deleted the ${deleted} oldest finished run${deleted === 1 ? '' : 's'} in ${this.baseDir} (${megabytes(freed)}) to keep the recordings there under ${megabytes(this.capBytes)} (--max-total-size) and ${MAX_FINISHED_RUNS} finished runs`,
        );
      }
      return this.capBytes - this.runs.reduce((sum, run) => sum + run.bytes, 0);
    } catch (error) {
      this.log.warnOnce(
        'total-cap-read',
        `cannot read ${this.baseDir} to keep its recordings under ${megabytes(this.capBytes)}: ${reason(error)}; only this run's own cap applies`,
      );
      return Number.POSITIVE_INFINITY;
    }
  }

  /** Finishes, synchronously, the removals still under way: at exit nothing is left half-removed. */
  settle(): void {
    for (const hidden of this.removing) {
      removeQuietly(hidden);
      this.removing.delete(hidden);
    }
  }

  private scanDue(): boolean {
    if (this.scannedAt === undefined) return true;
    if (performance.now() - this.scannedAt < RESCAN_MS) return false;
    return this.runs.some((run) => run.running) || this.folderMtime() !== this.folderMtimeMs;
  }

  private scan(): void {
    const here = this.vantage();
    this.folderMtimeMs = this.folderMtime();
    this.scannedAt = performance.now();
    this.runs = listRuns(this.baseDir, this.own).map((run) => ({ ...run, running: isRunning(run, here) }));
    // Removals a process did not live to finish: hidden from every reader, and still on disk.
    for (const name of nodeFs().readdirSync(this.baseDir)) {
      if (name.startsWith(DELETING_PREFIX)) this.removeInBackground(path.join(this.baseDir, name));
    }
  }

  /** Deletes a run after reading it again (it must still be a finished recording); its bytes, or undefined when it was not deleted. */
  private remove(name: string): number | undefined {
    const run = readRun(this.baseDir, name);
    if (run === undefined || isRunning(run, this.vantage())) return undefined;
    const hidden = path.join(this.baseDir, `${DELETING_PREFIX}${name}.${process.pid}-${++this.removals}`);
    try {
      nodeFs().renameSync(path.join(this.baseDir, name), hidden);
    } catch (error) {
      this.log.warnOnce('total-cap-delete', `could not delete the finished run ${path.join(this.baseDir, name)}: ${reason(error)}`);
      return undefined;
    }
    this.removeInBackground(hidden);
    return run.bytes;
  }

  private removeInBackground(hidden: string): void {
    if (this.removing.has(hidden)) return;
    this.removing.add(hidden);
    nodeFs().rm(hidden, { recursive: true, force: true }, (error) => {
      this.removing.delete(hidden);
      if (error) this.log.debug(`could not remove ${hidden}: ${reason(error)}`);
    });
  }

  private folderMtime(): number {
    return nodeFs().statSync(this.baseDir).mtimeMs;
  }

  private vantage(): Vantage {
    return { nowMs: Date.now(), pidNamespace: pidNamespace(), pidAlive };
  }
}
