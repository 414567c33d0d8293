import { TraceFlags } from '@opentelemetry/api';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';
import type { Outgoing } from './outgoing.js';

export interface BatcherOptions {
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduledDelayMillis: number;
  /** One batch of spans → the OTLP request that carries it (undefined if it cannot be serialized). */
  toRequest: (spans: ReadableSpan[]) => Outgoing | undefined;
  /** Where finished batches go for sending. */
  send: (request: Outgoing) => void;
  onDrop: (dropped: number) => void;
}

/**
 * Batches ended spans into OTLP requests (the OTEL_BSP_* semantics of the SDK's
 * BatchSpanProcessor) but hands them to our sender instead of an exporter, so that spans and
 * profiles share one queue/retry/backoff policy, and so that at exit the spans still buffered
 * can be serialized synchronously (`drain`) for the final flush.
 */
export class SpanBatcher implements SpanProcessor {
  private buffer: ReadableSpan[] = [];
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: BatcherOptions) {}

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if (this.closed || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
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

  /** Moves every buffered span into the sender, in batches. */
  flush(): void {
    for (const request of this.drain()) this.options.send(request);
  }

  /** Serializes and returns everything buffered; the batcher keeps working afterwards unless shut down. */
  drain(): Outgoing[] {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const requests: Outgoing[] = [];
    while (this.buffer.length > 0) {
      const batch = this.buffer.splice(0, this.options.maxExportBatchSize);
      const request = this.options.toRequest(batch);
      if (request) requests.push(request);
      else this.options.onDrop(batch.length);
    }
    return requests;
  }

  forceFlush(): Promise<void> {
    this.flush();
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    this.flush();
    this.closed = true;
    return Promise.resolve();
  }
}
