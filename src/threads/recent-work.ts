import type { SpanLabels } from '../span-link/labels.js';
import type { SampleOwner } from '../span-link/linking.js';

/** Messages remembered: far more than two samples apart ever see at the finest sampling interval. */
const SIZE = 64;
const nowMicros = () => performance.now() * 1000;

/**
 * The messages a worker thread handled lately, with the span each came for. A task shorter than
 * the sampling interval can run whole between two samples; its CPU time is then recorded with the
 * next sample, taken when the thread idles again, which sees no span. The thread's time profile
 * asks here whose work ran between those two samples (TimeFold `workBetween`): the last message
 * handled then. A message's handling runs from when it is dispatched (or read) to when the
 * dispatch returns (at once, for a read: its work runs after).
 */
export class RecentWork {
  private readonly starts = new Float64Array(SIZE);
  private readonly ends = new Float64Array(SIZE);
  private readonly labels: (SpanLabels | undefined)[] = new Array<SpanLabels | undefined>(SIZE);
  private next = 0;

  record(startMicros: number, endMicros: number, labels: SpanLabels): void {
    const slot = this.next++ % SIZE;
    this.starts[slot] = startMicros;
    this.ends[slot] = endMicros;
    this.labels[slot] = labels;
  }

  /** The labels of the last message handled between `fromMicros` and `toMicros` (monotonic). */
  between(fromMicros: number, toMicros: number): SpanLabels | undefined {
    for (let n = this.next - 1; n >= 0 && n >= this.next - SIZE; n--) {
      const slot = n % SIZE;
      if (this.starts[slot]! > toMicros) continue;
      return this.ends[slot]! >= fromMicros ? this.labels[slot] : undefined;
    }
    return undefined;
  }

  /** `owner`, with the messages it runs and enters for a span recorded. */
  recording(owner: SampleOwner): SampleOwner {
    return {
      ...owner,
      run: (labels, fn, thisArg, args) => {
        if (labels === undefined) return owner.run(labels, fn, thisArg, args);
        const start = nowMicros();
        try {
          return owner.run(labels, fn, thisArg, args);
        } finally {
          this.record(start, nowMicros(), labels);
        }
      },
      enter: (labels) => {
        owner.enter(labels);
        if (labels !== undefined) {
          const at = nowMicros();
          this.record(at, at, labels);
        }
      },
    };
  }
}
