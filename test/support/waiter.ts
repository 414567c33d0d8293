// Event-driven waiting: a condition is re-checked each time the receiver
// records something, never on a timer, so tests neither sleep nor poll.

import type { WaitForOptions } from './receiver-types.js';

type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

interface Pending {
  check(): boolean;
  fail(error: Error): void;
}

const DEFAULT_TIMEOUT_MS = 10_000;

export class Waiter {
  private readonly pending = new Set<Pending>();
  private closedWith: Error | undefined;

  /** `describe` summarises what has been received, for the timeout message. */
  constructor(private readonly describe: () => string) {}

  /**
   * Resolves with the first truthy value `check` returns. A throwing check
   * counts as "not yet" (so `r.ingests[0]!.samples` is fine to write); its
   * last error is reported on timeout.
   */
  waitFor<T>(check: () => T, options: WaitForOptions = {}): Promise<Truthy<T>> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return new Promise<Truthy<T>>((resolve, reject) => {
      let lastError: unknown;
      const entry: Pending = {
        check: () => {
          try {
            const value = check();
            if (!value) return false;
            this.settle(entry, timer);
            resolve(value as Truthy<T>);
            return true;
          } catch (error) {
            lastError = error;
            return false;
          }
        },
        fail: (error) => {
          this.settle(entry, timer);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        const what = options.description ? `: ${options.description}` : '';
        const cause = lastError === undefined ? '' : `\nlast check error: ${(lastError as Error).message ?? String(lastError)}`;
        entry.fail(new Error(`waitFor timed out after ${timeoutMs}ms${what}\n${this.describe()}${cause}`));
      }, timeoutMs);
      this.pending.add(entry);
      if (!entry.check() && this.closedWith) entry.fail(this.closedWith);
    });
  }

  /** Re-checks every pending condition; called after each recorded event. */
  notify(): void {
    for (const entry of [...this.pending]) entry.check();
  }

  /** Rejects everything still waiting, and any later wait not satisfied at once: nothing new will arrive. */
  close(error: Error): void {
    this.closedWith = error;
    for (const entry of [...this.pending]) entry.fail(error);
  }

  private settle(entry: Pending, timer: NodeJS.Timeout | undefined): void {
    this.pending.delete(entry);
    clearTimeout(timer);
  }
}
