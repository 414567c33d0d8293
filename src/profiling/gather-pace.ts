/**
 * How often the time sampler's profile is gathered within a window. Stopping V8's profile (and
 * restarting it) holds the event loop for as long as the addon takes to turn the profile's tree
 * into JavaScript objects, which grows with its nodes, and the tree of a whole window on an app of
 * thousands of functions has thousands (docs/performance.md, "Flush pauses and event-loop stalls";
 * bench/big-app.mjs). A tree gathered every second is a fraction of that, since it holds only the
 * stacks of that second's samples; each is
 * folded into the window's stacks at once, and the window's pprof is built from them later, off
 * the cut (time-profile.ts).
 *
 * The pace adapts to what a gather costs: a gather that held the loop longer than the budget
 * halves the time to the next one, one far under it doubles it, between the floor and the window.
 * So the hold stays near the budget whatever the app's size, down to the floor's four stops a
 * second; a small app ends up gathered once a window (doubling from the first gather's wait), as
 * without gathers.
 */
export const GATHER = {
  /**
   * The first gather comes this long into sampling: soon, since the app's start-up (its modules
   * loading, its code running for the first time) makes the largest trees.
   */
  firstMs: 250,
  /** Never more often than this: each stop costs a fixed ~0.1 ms besides its tree. */
  floorMs: 250,
  /** The longest a gather should hold the event loop. */
  budgetMs: 2,
} as const;

/**
 * Whether a gather due at `nowMs` is taken: not within the floor after the last stop (a gather or
 * the cut) nor before the window's next cut. A profile of a few milliseconds can hold no sample,
 * which @datadog/pprof reads as V8's profiler being stuck (`detectV8Bug` in its wall.cc), and the
 * sampler is then restarted from scratch. A gather skipped waits as long as planned.
 */
export function gatherNow(nowMs: number, lastStopMs: number, nextCutMs: number): boolean {
  return nowMs - lastStopMs >= GATHER.floorMs && nextCutMs - nowMs >= GATHER.floorMs;
}

/** The wait before the next gather, from the last wait and what the gather after it held the loop for. */
export function nextGatherMs(lastMs: number, heldMs: number, windowMs: number): number {
  if (heldMs > GATHER.budgetMs) return Math.max(GATHER.floorMs, Math.floor(lastMs / 2));
  if (heldMs < GATHER.budgetMs / 4) return Math.min(windowMs, lastMs * 2);
  return Math.min(windowMs, Math.max(GATHER.floorMs, lastMs));
}
