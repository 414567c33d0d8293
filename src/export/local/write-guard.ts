import type { Logger } from '../../log.js';
import { describeDiskError, isDiskFull } from './disk-error.js';

/** After a full disk, how long windows and spans are dropped (counted) before writing is tried again. */
const DISK_FULL_PAUSE_MS = 30_000;

/**
 * What a write error does to a recording: a full disk pauses writing for DISK_FULL_PAUSE_MS (what
 * comes meanwhile is dropped and counted by the writers), then the next write tries again; any
 * other error (no permission, a read-only file system) stops the recording. Either is said once;
 * the app goes on.
 */
export class WriteGuard {
  /** Until when (performance.now()) writes are dropped after a full disk; 0 when they are not. */
  private diskFullUntil = 0;
  private stopped = false;

  constructor(
    private readonly dir: string,
    private readonly log: Logger,
  ) {}

  /** The recording stopped on an error other than a full disk. */
  get broken(): boolean {
    return this.stopped;
  }

  /** Whether writes are being dropped after a full disk; the first write after the pause tries again. */
  paused(): boolean {
    return this.diskFullUntil !== 0 && performance.now() < this.diskFullUntil;
  }

  /**
   * Runs `write`, its disk errors handled as above; nothing once the recording stopped. True when it
   * ran through. The disk has room again when a write runs through after the pause: one that does
   * during it (a small file where an eviction made room, run.json) ends nothing, so a disk that
   * stays full is said once, not again at each such write's next failure.
   */
  run(write: () => void): boolean {
    if (this.stopped) return false;
    try {
      write();
      if (this.diskFullUntil !== 0 && !this.paused()) {
        this.diskFullUntil = 0;
        this.log.clear('disk-full');
        this.log.info(`there is room on the disk again: recording into ${this.dir} goes on (what was dropped meanwhile is counted in run.json)`);
      }
      return true;
    } catch (error) {
      if (isDiskFull(error)) {
        this.diskFullUntil = performance.now() + DISK_FULL_PAUSE_MS;
        this.log.warnOnce(
          'disk-full',
          `${describeDiskError(error, this.dir)}: profile windows and spans are dropped (counted in run.json) and writing is tried again every ${DISK_FULL_PAUSE_MS / 1000} s; no partial file is left; the app is not affected`,
        );
        return false;
      }
      this.stopped = true;
      this.log.warn(`cannot write the recording in ${this.dir}: ${describeDiskError(error, this.dir)}; recording stopped, the app is not affected`);
      return false;
    }
  }
}
