/**
 * Finds the stretches during which the main thread's event loop did not turn: a timer of ours,
 * unref'd, due every `periodMs`, notes when the loop last reached it. A timer runs in the loop's
 * timers phase, and libuv polls for I/O with a timeout no longer than the next timer's due time
 * (uv_backend_timeout), so a timer that comes late by far more than the period means the loop was
 * busy all along: one task, or one turn's callbacks, held the thread.
 *
 * Why a timer and not `perf_hooks.monitorEventLoopDelay`: that histogram, fed by a libuv timer of
 * Node's, says how often and how long the loop was late, not when — and a stall must be matched to
 * the profile samples taken during it. Nor async_hooks' before/after around every callback, which
 * would cost on each of them what this costs once a period. The timer costs one callback a period
 * (~1 µs) whatever the app does, and nothing of the app's code path.
 */

/** A stretch during which the loop did not turn, on the monotonic clock (performance.now(), ms). */
export interface Stall {
  /** The loop last turned here: the stall began at or after this. */
  sinceMs: number;
  /** The watch's timer was due here without running: the loop was busy from here on at least. */
  dueMs: number;
  /** The loop turned again. */
  untilMs: number;
}

/**
 * The watch's period for a threshold: half of it, so that a stall of the threshold makes the timer
 * late by at least half the threshold; never more often than every 10 ms nor less than once a second.
 */
export function watchPeriodMs(thresholdMs: number): number {
  return Math.min(1000, Math.max(10, Math.floor(thresholdMs / 2)));
}

/**
 * The stall that ended when the loop turned at `nowMs`, having last turned at `lastTurnMs`; the
 * watch's timer was due at `dueMs`. A block of the threshold lies inside the gap, so a gap shorter
 * than the threshold holds none; a longer gap may (what ran in it is the samples' to say).
 */
export function stallOf(lastTurnMs: number, dueMs: number, nowMs: number, thresholdMs: number): Stall | undefined {
  if (nowMs - lastTurnMs < thresholdMs) return undefined;
  return { sinceMs: lastTurnMs, dueMs: Math.min(Math.max(dueMs, lastTurnMs), nowMs), untilMs: nowMs };
}

/** The timer, and the stalls it finds, handed to `onStall` as the loop turns again. */
export class StallWatch {
  readonly periodMs: number;
  private timer: NodeJS.Timeout | undefined;
  /** When the loop last turned; undefined until its first turn. */
  private lastTurnMs: number | undefined;
  private lastFireMs = 0;

  constructor(
    private readonly thresholdMs: number,
    private readonly onStall: (stall: Stall) => void,
  ) {
    this.periodMs = watchPeriodMs(thresholdMs);
  }

  /**
   * Started in the preload, the watch counts from the loop's first turn: before it, the app's main
   * module runs (its requires, its set-up), which is the app starting, not its event loop stalling.
   */
  start(): void {
    this.lastFireMs = performance.now();
    // setInterval keeps one timer object and re-arms it from each run (Node's listOnTimeout).
    this.timer = setInterval(() => this.fire(), this.periodMs).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * The loop turned now (a timer of the agent's runs): a stall that ended here is handed over
   * before this returns. The sampler's stops call it first, since their timer can run before the
   * watch's in the same turn, and the stall's samples are in the tree they take.
   */
  turn(nowMs = performance.now()): void {
    const last = this.lastTurnMs;
    this.lastTurnMs = nowMs;
    const stall = last === undefined ? undefined : stallOf(last, this.lastFireMs + this.periodMs, nowMs, this.thresholdMs);
    if (stall !== undefined) this.onStall(stall);
  }

  /** Whether the loop has not turned for the threshold or longer: code running now may be inside a block. */
  heldNow(nowMs = performance.now()): boolean {
    return this.timer !== undefined && this.lastTurnMs !== undefined && nowMs - this.lastTurnMs >= this.thresholdMs;
  }

  private fire(): void {
    const now = performance.now();
    this.turn(now);
    this.lastFireMs = now;
  }
}
