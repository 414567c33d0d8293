// Fault injection state for one endpoint: which Behaviour applies to the next
// request, and for how many more requests.

import type { Behaviour } from './receiver-types.js';

export class BehaviourSlot {
  private current: Behaviour | undefined;
  private remaining = Number.POSITIVE_INFINITY;

  set(behaviour: Behaviour | undefined): void {
    if (behaviour?.times !== undefined && (!Number.isInteger(behaviour.times) || behaviour.times < 1)) {
      throw new RangeError(`behaviour.times must be a positive integer, got ${behaviour.times}`);
    }
    this.current = behaviour;
    this.remaining = behaviour?.times ?? Number.POSITIVE_INFINITY;
  }

  /** The behaviour the next request would get, without consuming it. */
  peek(): Behaviour | undefined {
    return this.current;
  }

  /** The behaviour for the request now arriving, consuming one of its `times`. */
  take(): Behaviour | undefined {
    const behaviour = this.current;
    if (behaviour === undefined) return undefined;
    this.remaining -= 1;
    if (this.remaining <= 0) this.current = undefined;
    return behaviour;
  }
}
