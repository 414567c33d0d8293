import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';
import { otelApi } from '../vendor.js';

const { TraceFlags } = otelApi();

export interface BatcherOptions {
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduledDelayMillis: number;
  /** A full batch, or the buffer when the delay passed. */
  onBatch: (spans: ReadableSpan[]) => void;
  onDrop: (dropped: number) => void;
  /** A batch the destination could not take: reported, never thrown into the app. */
  onError: (error: unknown) => void;
}

/**
 * Batches ended, sampled spans with the OTEL_BSP_* semantics of the SDK's BatchSpanProcessor,
 * but hands batches to our destination instead of an exporter: spans and profiles then share one
 * delivery policy, and at exit the spans still buffered can be taken synchronously
 * (`takeBuffered`) for the final flush.
 *
 * A full batch is handed over in a turn of the event loop of its own (setImmediate), not inside
 * the `span.end()` that filled it: that call runs in the app's code (a response's 'close', a query's
 * callback), and the hand-over (the first slice of the encoding, the send) would lengthen the
 * app's own task.
 */
export class SpanBatcher implements SpanProcessor {
  private buffer: ReadableSpan[] = [];
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;

  constructor(private readonly options: BatcherOptions) {}

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.buffer.length >= this.options.maxQueueSize) {
      this.options.onDrop(1);
      return;
    }
    this.buffer.push(span);
    if (this.buffer.length >= this.options.maxExportBatchSize) {
      this.immediate ??= setImmediate(() => this.flush()).unref();
    } else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), this.options.scheduledDelayMillis).unref();
    }
  }

  /** Hands every buffered span to the destination, in batches. */
  flush(): void {
    for (const batch of this.takeBuffered()) {
      try {
        this.options.onBatch(batch);
      } catch (error) {
        this.options.onError(error);
      }
    }
  }

  /** Empties the buffer into batches of at most maxExportBatchSize, without sending them. */
  takeBuffered(): ReadableSpan[][] {
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
    const batches: ReadableSpan[][] = [];
    while (this.buffer.length > 0) batches.push(this.buffer.splice(0, this.options.maxExportBatchSize));
    return batches;
  }

  forceFlush(): Promise<void> {
    this.flush();
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    this.flush();
    return Promise.resolve();
  }
}
