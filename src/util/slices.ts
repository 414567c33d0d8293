/**
 * Work spread over turns of the event loop, so that the app's own callbacks run in between. The
 * work is a generator that yields at points where it may be interrupted; it is run in slices of
 * ~`sliceMs` (`runSliced`), or through in one go where the loop no longer turns (`runNow`: exit).
 */

/** Longest stretch of the event loop our sliced work (a profile window's build and encoding, the encoding of ended spans) takes before letting the app run. */
export const SLICE_MS = 2;

/** The next turn of the event loop, after the I/O callbacks already waiting. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Runs `steps` through in one go. */
export function runNow<T>(steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** What a sliced run held the event loop for: how many slices, and the longest of them. */
export interface SliceStats {
  slices: number;
  longestMs: number;
}

/**
 * Runs `steps` in slices of at most ~`sliceMs` of the event loop each, with a turn in between; a
 * slice ends after the step that crosses `sliceMs`. With `stats`, each slice is counted into it.
 */
export async function runSliced<T>(steps: Generator<void, T>, sliceMs: number, stats?: SliceStats): Promise<T> {
  for (;;) {
    const sliceStart = performance.now();
    const step = runSlice(steps, sliceMs, sliceStart);
    if (stats !== undefined) {
      stats.slices += 1;
      stats.longestMs = Math.max(stats.longestMs, performance.now() - sliceStart);
    }
    if (step.done) return step.value;
    await nextTurn();
  }
}

/** Runs steps until the generator ends or a step ends `sliceMs` or more after `sliceStart`. */
function runSlice<T>(steps: Generator<void, T>, sliceMs: number, sliceStart: number): IteratorResult<void, T> {
  for (;;) {
    const step = steps.next();
    if (step.done || performance.now() - sliceStart >= sliceMs) return step;
  }
}
