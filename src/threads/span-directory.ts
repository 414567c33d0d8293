import type { ShippedLabels } from '../profiling/fold-shipment.js';
import { SpanLabels } from '../span-link/labels.js';
import { LABEL_SPAN_ID, LABEL_SPAN_NAME, LABEL_TRACE_ID } from '../wire.js';

/**
 * Spans as threads name them to each other: a message carries its sender's span as its sample
 * labels (span_id, span_name, trace_id), and so does a worker's shipment of samples. The receiving
 * thread labels its samples with the SpanLabels those name here. The main thread keeps the spans it
 * handed to another thread by ID for a while, so that the samples of the work done for them come
 * back to the span's own labels object, whose name is read when the window is built (`GET` becomes
 * `GET /users/:id`): a span is kept until a sweep (every window) finds it ended before the sweep
 * before.
 */
export class SpanDirectory {
  private readonly handed = new Map<string, SpanLabels>();
  /** Labels made from what another thread said, for spans this thread does not hold: until the next sweep. */
  private named = new Map<string, SpanLabels>();
  /** When the last sweep ran, monotonic microseconds. */
  private lastSweepMicros = 0;

  /** `labels` as a message to another thread carries them; the span is kept for what comes back. */
  handOver(labels: SpanLabels): ShippedLabels {
    if (this.handed.get(labels.spanId) !== labels) this.handed.set(labels.spanId, labels);
    return labels.toLabels(true);
  }

  /** The labels to put on samples of work done for the span another thread named. */
  labelsOf(shipped: ShippedLabels): SpanLabels | undefined {
    const spanId = shipped[LABEL_SPAN_ID];
    if (spanId === undefined) return undefined;
    const kept = this.handed.get(spanId) ?? this.named.get(spanId);
    if (kept !== undefined) return kept;
    const made = new SpanLabels(spanId, shipped[LABEL_TRACE_ID] ?? '', { name: shipped[LABEL_SPAN_NAME] ?? '' });
    this.named.set(spanId, made);
    return made;
  }

  /** Lets go of the spans that ended before the last sweep, and of the labels made since. */
  sweep(nowMicros = performance.now() * 1000): void {
    for (const [spanId, labels] of this.handed) {
      if (labels.endedAtMicros !== undefined && labels.endedAtMicros < this.lastSweepMicros) this.handed.delete(spanId);
    }
    this.named = new Map();
    this.lastSweepMicros = nowMicros;
  }
}
