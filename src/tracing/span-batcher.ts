import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';
import type { SpanEncoder } from '../export/destination.js';
import type { EncodedSpan } from '../export/otlp/otlp-trace-encode.js';
import { Batcher, type BatcherOptions } from '../util/batcher.js';
import { otelApi } from '../vendor.js';
import { EncodedSpanQueue } from './encoded-span-queue.js';

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
  /** Each span as it leaves (db-statements.ts, block-events.ts): applied in a turn of ours, not at the span's end in the app's code. */
  outgoing?: (span: ReadableSpan) => ReadableSpan;
  gate?: SpanGate;
  /** Spans batched as their bytes (encoded-span-queue.ts), where the destination sends OTLP/protobuf; without it, the span objects are batched and `onBatch` takes them. */
  encoded?: SpanEncoder | undefined;
}

/** Ended, sampled spans in OTEL_BSP_* batches to our destination (util/batcher.ts): as span objects, or as their bytes. */
export class SpanBatcher implements SpanProcessor {
  private readonly objects: Batcher<ReadableSpan> | undefined;
  /** Each batch of span objects as it leaves: the outgoing view of each span. */
  private readonly leaving: (spans: ReadableSpan[]) => ReadableSpan[];
  private readonly encoded: EncodedSpanQueue | undefined;
  private readonly gate: SpanGate | undefined;
  private readonly pass = (span: ReadableSpan): void => {
    if (this.objects) this.objects.add(span);
    else this.encoded!.add(span);
  };

  constructor({ outgoing, gate, encoded, ...options }: SpanBatcherOptions) {
    this.gate = gate;
    this.leaving = outgoing ? (spans) => spans.map(outgoing) : (spans) => spans;
    if (encoded) this.encoded = new EncodedSpanQueue({ ...options, ...encoded, outgoing });
    else this.objects = new Batcher({ ...options, onBatch: (spans) => options.onBatch(this.leaving(spans)) });
  }

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.gate?.keep(span, this.pass)) return;
    this.pass(span);
  }

  /** Hands every buffered span to the destination, in batches. */
  flush(): void {
    this.gate?.drain();
    this.objects?.flush();
    this.encoded?.flush();
  }

  /** Empties the buffer (and what the gate held) into batches of span objects, without sending them: none when spans are batched as bytes. */
  takeBuffered(): ReadableSpan[][] {
    if (this.objects === undefined) return [];
    this.gate?.drain();
    return this.objects.takeBuffered().map(this.leaving);
  }

  /** Empties the buffer (and what the gate held) into batches of encoded spans, without sending them: none when span objects are batched. */
  takeEncoded(): EncodedSpan[][] {
    if (this.encoded === undefined) return [];
    this.gate?.drain();
    return this.encoded.takeBuffered();
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
