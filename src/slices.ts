/**
 * Work spread over turns of the event loop, so that the app's own callbacks run in between. The
 * work is a generator that yields at points where it may be interrupted; it is run in slices of
 * ~`sliceMs` (`runSliced`), or through in one go where the loop no longer turns (`runNow`: exit).
 */

/** The next turn of the event loop, after the I/O callbacks already waiting. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Runs `steps` through in one go. */
export function runNow<T>(steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Runs `steps` in slices of at most ~`sliceMs` of the event loop each, with a turn in between. */
export async function runSliced<T>(steps: Generator<void, T>, sliceMs: number): Promise<T> {
  let sliceStart = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - sliceStart >= sliceMs) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
}
