import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Config } from '../../config/index.js';
import type { Logger } from '../../log.js';
import { otlpJsonTraceSerializer } from '../../vendor.js';
import type { FinalData } from '../destination.js';
import type { Outgoing } from '../transport/outgoing.js';
import type { Send, Upstream } from '../upstream.js';
import { countText, DEFAULT_TRACES_URL } from './otlp-request.js';
import { OtlpSignalSender, type SignalEncoding } from './otlp-signal-upstream.js';
import { type EncodedSpan, encodeTraceRequest, prepareTraceEncoder, traceRequestOf } from './otlp-trace-encode.js';

const SPANS = { kind: 'spans', noun: 'span batch', what: (spans: readonly unknown[]) => countText(spans.length, 'span') } as const;

/** Span objects: JSON by the SDK's serializer (loaded at start-up, by prepare), protobuf by ours. */
const SPAN_OBJECTS: SignalEncoding<ReadableSpan> = {
  ...SPANS,
  serializer: (json) => {
    if (!json) return encodeTraceRequest;
    const serializer = otlpJsonTraceSerializer();
    return (spans) => serializer.serializeRequest(spans);
  },
};

/** Spans already encoded (protobuf): a request put together from their bytes; our encoder runs once at start-up, by prepare. */
const ENCODED_SPANS: SignalEncoding<EncodedSpan> = {
  ...SPANS,
  serializer: () => {
    prepareTraceEncoder();
    return traceRequestOf;
  },
};

/**
 * Span batches to an OTLP/HTTP traces endpoint (otlp-signal-upstream.ts, as metrics and logs): over
 * http/protobuf the spans arrive encoded (tracing/encoded-span-queue.ts) and a batch's request is
 * put together from their bytes; over http/json the SDK's serializer writes the span objects.
 */
export class OtlpTracesUpstream implements Upstream {
  private readonly objects: OtlpSignalSender<ReadableSpan>;
  private readonly encoded: OtlpSignalSender<EncodedSpan> | undefined;

  constructor(traces: Config['traces'], send: Send, log: Logger) {
    const endpoint = { ...traces, endpoint: traces.endpoint ?? DEFAULT_TRACES_URL };
    this.objects = new OtlpSignalSender(endpoint, SPAN_OBJECTS, send, log);
    if (traces.protocol !== 'http/json') this.encoded = new OtlpSignalSender(endpoint, ENCODED_SPANS, send, log);
  }

  /** Whether spans come to it encoded (http/protobuf): through `encodedSpans` then, else `spans`. */
  get takesEncodedSpans(): boolean {
    return this.encoded !== undefined;
  }

  prepare(): void {
    (this.encoded ?? this.objects).prepare();
  }

  spans(batch: ReadableSpan[]): void {
    this.objects.add(batch);
  }

  encodedSpans(batch: EncodedSpan[]): void {
    this.encoded?.add(batch);
  }

  settle(): Promise<void> {
    return Promise.all([this.objects.settle(), this.encoded?.settle()]).then(() => undefined);
  }

  owedSync(last: FinalData): Outgoing[] {
    return [...this.objects.owedSync(last.spanBatches), ...(this.encoded?.owedSync(last.encodedSpanBatches ?? []) ?? [])];
  }
}
