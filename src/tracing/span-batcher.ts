import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';
import { Batcher, type BatcherOptions } from '../util/batcher.js';
import { otelApi } from '../vendor.js';

const { TraceFlags } = otelApi();

/**
 * Holds some spans' export for a while (src/blocks/block-spans.ts: a span that may be charged with a
 * block being attributed): `keep` takes a span as it ends, or declines it; what it takes it hands
 * to `pass` later, in the order taken.
 */
export interface SpanGate {
  keep(span: ReadableSpan, pass: (span: ReadableSpan) => void): boolean;
  /** Hands everything kept to its `pass` now (the final flush). */
  drain(): void;
}

export interface SpanBatcherOptions extends BatcherOptions<ReadableSpan> {
  /** Each span as it leaves in a batch (db-statements.ts, block-events.ts): applied in the batch's own turn, not at the span's end in the app's code. */
  outgoing?: (span: ReadableSpan) => ReadableSpan;
  gate?: SpanGate;
}

/** Ended, sampled spans in OTEL_BSP_* batches to our destination (util/batcher.ts). */
export class SpanBatcher implements SpanProcessor {
  private readonly batcher: Batcher<ReadableSpan>;
  private readonly outgoing: ((spans: ReadableSpan[]) => ReadableSpan[]) | undefined;
  private readonly gate: SpanGate | undefined;
  private readonly pass = (span: ReadableSpan): void => this.batcher.add(span);

  constructor({ outgoing, gate, ...options }: SpanBatcherOptions) {
    this.gate = gate;
    this.outgoing = outgoing && ((spans) => spans.map(outgoing));
    const onBatch = this.outgoing ? (spans: ReadableSpan[]) => options.onBatch(this.outgoing!(spans)) : options.onBatch;
    this.batcher = new Batcher({ ...options, onBatch });
  }

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.gate?.keep(span, this.pass)) return;
    this.batcher.add(span);
  }

  /** Hands every buffered span to the destination, in batches. */
  flush(): void {
    this.gate?.drain();
    this.batcher.flush();
  }

  /** Empties the buffer (and what the gate held) into batches, without sending them. */
  takeBuffered(): ReadableSpan[][] {
    this.gate?.drain();
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
