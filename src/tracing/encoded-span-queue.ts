import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { SpanEncoder } from '../export/destination.js';
import type { EncodedSpan } from '../export/otlp/otlp-trace-encode.js';
import { Batcher, type BatcherOptions } from '../util/batcher.js';
import { SLICE_MS } from '../util/slices.js';

/** Spans encoded between two looks at the clock (~16 × 2 µs). */
export const SPANS_PER_PIECE = 16;

export interface EncodedSpanQueueOptions extends Omit<BatcherOptions<EncodedSpan>, 'onDrop' | 'onBatch'>, SpanEncoder {
  /** Each span as it leaves (span-batcher.ts), applied before it is encoded. */
  outgoing: ((span: ReadableSpan) => ReadableSpan) | undefined;
  /** A span the queue had no room for (OTEL_BSP_MAX_QUEUE_SIZE). */
  onDrop: (span: ReadableSpan) => void;
}

/**
 * Spans waiting for their batch as their bytes (the destination sends OTLP/protobuf): the spans
 * that end while the app's code runs are encoded right after it, in an immediate (a slice of at
 * most ~SLICE_MS; what is left, in the next turn), never inside the app's `span.end()`, and the
 * span objects are let go; the bytes are batched with OTEL_BSP_* semantics (util/batcher.ts). A
 * batch fills in tens of milliseconds under load and takes up to OTEL_BSP_SCHEDULE_DELAY when
 * idle: span objects held that long survive the young generation's scavenges — copied, then
 * promoted to the old generation for the major collector to find — where their bytes wait outside
 * V8's heap; and every span still waiting at a scavenge is copied once, so they wait as short a
 * time as the event loop allows (bench/scavenge-survivors.mjs counts what survives).
 */
export class EncodedSpanQueue {
  private readonly batcher: Batcher<EncodedSpan>;
  /** Spans ended and not yet encoded. */
  private ended: ReadableSpan[] = [];
  private encoding: NodeJS.Immediate | undefined;
  private readonly encodeEnded = (): void => this.encodeFor(SLICE_MS);

  constructor(private readonly options: EncodedSpanQueueOptions) {
    // Never full: a span is taken only while the queue, with the spans not yet encoded, has room (add).
    this.batcher = new Batcher({ ...options, onDrop: () => {} });
  }

  add(span: ReadableSpan): void {
    if (this.ended.length + this.batcher.size >= this.options.maxQueueSize) {
      this.options.onDrop(span);
      return;
    }
    this.ended.push(span);
    this.encoding ??= setImmediate(this.encodeEnded);
  }

  /** Hands everything queued to the destination, in batches. */
  flush(): void {
    this.encodeAll();
    this.batcher.flush();
  }

  /** Empties the queue into batches, without sending them (the final flush, where no turn comes). */
  takeBuffered(): EncodedSpan[][] {
    this.encodeAll();
    return this.batcher.takeBuffered();
  }

  /** Every span not yet encoded, now (a flush, the exit). */
  private encodeAll(): void {
    this.encodeFor(Number.POSITIVE_INFINITY);
  }

  /** The spans that ended, encoded a piece at a time for up to ~`ms`; the rest in the next turn. */
  private encodeFor(ms: number): void {
    if (this.encoding !== undefined) clearImmediate(this.encoding);
    this.encoding = undefined;
    const start = performance.now();
    let from = 0;
    while (from < this.ended.length && performance.now() - start < ms) {
      this.encodePiece(this.ended.slice(from, from + SPANS_PER_PIECE));
      from += SPANS_PER_PIECE;
    }
    this.ended = this.ended.slice(from);
    if (this.ended.length > 0) this.encoding = setImmediate(this.encodeEnded);
  }

  /** Spans into the queue as their bytes; a span that cannot be encoded is reported and left out, never thrown into the app. */
  private encodePiece(spans: ReadableSpan[]): void {
    const { encode, outgoing } = this.options;
    try {
      for (const span of encode(outgoing ? spans.map(outgoing) : spans)) this.batcher.add(span);
    } catch (error) {
      if (spans.length === 1) this.options.onError(error);
      else for (const span of spans) this.encodePiece([span]);
    }
  }
}
