import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';
import { Batcher, type BatcherOptions } from '../util/batcher.js';
import { otelApi } from '../vendor.js';

const { TraceFlags } = otelApi();

/** Ended, sampled spans in OTEL_BSP_* batches to our destination (util/batcher.ts). */
export class SpanBatcher implements SpanProcessor {
  private readonly batcher: Batcher<ReadableSpan>;

  constructor(options: BatcherOptions<ReadableSpan>) {
    this.batcher = new Batcher(options);
  }

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    this.batcher.add(span);
  }

  /** Hands every buffered span to the destination, in batches. */
  flush(): void {
    this.batcher.flush();
  }

  /** Empties the buffer into batches, without sending them. */
  takeBuffered(): ReadableSpan[][] {
    return this.batcher.takeBuffered();
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
