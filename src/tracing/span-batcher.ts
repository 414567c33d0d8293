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
}

/**
 * Batches ended, sampled spans with the OTEL_BSP_* semantics of the SDK's BatchSpanProcessor,
 * but hands batches to our destination instead of an exporter: spans and profiles then share one
 * delivery policy, and at exit the spans still buffered can be taken synchronously
 * (`takeBuffered`) for the final flush.
 */
export class SpanBatcher implements SpanProcessor {
  private buffer: ReadableSpan[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: BatcherOptions) {}

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.buffer.length >= this.options.maxQueueSize) {
      this.options.onDrop(1);
      return;
    }
    this.buffer.push(span);
    if (this.buffer.length >= this.options.maxExportBatchSize) this.flush();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), this.options.scheduledDelayMillis);
      this.timer.unref();
    }
  }

  /** Hands every buffered span to the destination, in batches. */
  flush(): void {
    for (const batch of this.takeBuffered()) this.options.onBatch(batch);
  }

  /** Empties the buffer into batches of at most maxExportBatchSize, without sending them. */
  takeBuffered(): ReadableSpan[][] {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
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
