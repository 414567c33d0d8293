/**
 * Work started off the hot path (a profile window's encoding, a span batch's), remembered until it
 * ends, so that the exit path — after which no async work completes — can take what is still in
 * progress and do it synchronously instead of losing it. Work taken that way has its own async
 * result ignored.
 */
export class InProgress<K> {
  private readonly running = new Map<K, Promise<void>>();

  /** Tracks `work` for `key`: `done` gets its result, `failed` its error, unless `key` was taken meanwhile. */
  add<T>(key: K, work: Promise<T>, done: (value: T) => void, failed: (error: unknown) => void): void {
    const settled = work.then(
      (value) => {
        if (this.running.delete(key)) done(value);
      },
      (error: unknown) => {
        if (this.running.delete(key)) failed(error);
      },
    );
    this.running.set(key, settled);
  }

  /** Resolves once everything added so far has ended (done or failed). */
  async settle(): Promise<void> {
    await Promise.all(this.running.values());
  }

  /** Everything still in progress, no longer tracked: the caller finishes it. */
  take(): K[] {
    const keys = [...this.running.keys()];
    this.running.clear();
    return keys;
  }
}
