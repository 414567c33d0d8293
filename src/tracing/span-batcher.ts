import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';
import { Batcher, type BatcherOptions } from '../util/batcher.js';
import { otelApi } from '../vendor.js';

const { TraceFlags } = otelApi();

export interface SpanBatcherOptions extends BatcherOptions<ReadableSpan> {
  /** Each span as it leaves in a batch (db-statements.ts): applied in the batch's own turn, not at the span's end in the app's code. */
  outgoing?: (span: ReadableSpan) => ReadableSpan;
}

/** Ended, sampled spans in OTEL_BSP_* batches to our destination (util/batcher.ts). */
export class SpanBatcher implements SpanProcessor {
  private readonly batcher: Batcher<ReadableSpan>;
  private readonly outgoing: ((spans: ReadableSpan[]) => ReadableSpan[]) | undefined;

  constructor({ outgoing, ...options }: SpanBatcherOptions) {
    this.outgoing = outgoing && ((spans) => spans.map(outgoing));
    const onBatch = this.outgoing ? (spans: ReadableSpan[]) => options.onBatch(this.outgoing!(spans)) : options.onBatch;
    this.batcher = new Batcher({ ...options, onBatch });
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
    const batches = this.batcher.takeBuffered();
    return this.outgoing ? batches.map(this.outgoing) : batches;
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
