/**
 * Spans whose export waits, in the order they ended, each until the stalls it may have run in are
 * settled (numbered as BlockWatch.stallsBy numbers them) or until it has waited `maxHoldMs`,
 * whichever comes first; past `maxHeld` the oldest goes at once. What leaves is handed to the
 * `pass` it came with (the batcher), so a span leaves as it would have, only later.
 */
export class SpanHold<T> {
  private held: { item: T; pass: (item: T) => void; waitsFor: number; untilMs: number }[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly maxHoldMs: number,
    private readonly maxHeld: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  get size(): number {
    return this.held.length;
  }

  /** Holds `item` until stall `waitsFor` is settled; stalls are numbered in the order seen, so the held wait in order. */
  hold(item: T, pass: (item: T) => void, waitsFor: number, nowMs = performance.now()): void {
    this.held.push({ item, pass, waitsFor, untilMs: nowMs + this.maxHoldMs });
    if (this.held.length > this.maxHeld) this.passFirst(this.held.length - this.maxHeld);
    this.timer ??= this.expiry(this.maxHoldMs);
  }

  /** Every stall up to `through` is settled: what waited for them leaves, and what waited too long. */
  settled(through: number, nowMs = performance.now()): void {
    let n = 0;
    while (n < this.held.length && (this.held[n]!.waitsFor <= through || this.held[n]!.untilMs <= nowMs)) n++;
    this.passFirst(n);
  }

  /** Everything held leaves now (the final flush). */
  drain(): void {
    this.passFirst(this.held.length);
  }

  private passFirst(n: number): void {
    if (n <= 0) return;
    const leaving = this.held.splice(0, n);
    for (const { item, pass } of leaving) {
      try {
        pass(item);
      } catch (error) {
        this.onError(error);
      }
    }
    if (this.held.length === 0) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  /** Lets go of what waited too long, then waits for the next one's time. */
  private expiry(waitMs: number): NodeJS.Timeout {
    return setTimeout(
      () => {
        this.timer = undefined;
        const now = performance.now();
        this.settled(Number.NEGATIVE_INFINITY, now);
        const next = this.held[0];
        if (next !== undefined) this.timer = this.expiry(Math.max(1, next.untilMs - now));
      },
      Math.max(1, waitMs),
    ).unref();
  }
}
