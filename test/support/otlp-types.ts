// The decoded shape of OTLP trace data, shared by the protobuf and JSON decoders
// so a test cannot tell which encoding the exporter chose.
// Message layout: opentelemetry-proto opentelemetry/proto/trace/v1/trace.proto,
// common/v1/common.proto and resource/v1/resource.proto.

/** AnyValue: int64 becomes a number when it is a safe integer, else a bigint. */
export type AttributeValue = string | boolean | number | bigint | Uint8Array | AttributeValue[] | { [key: string]: AttributeValue } | null;

export type Attributes = Record<string, AttributeValue>;

export interface DecodedScope {
  name: string;
  version: string;
  attributes: Attributes;
}

export interface DecodedEvent {
  name: string;
  timeUnixNano: bigint;
  attributes: Attributes;
}

export interface DecodedLink {
  traceId: string;
  spanId: string;
  traceState: string;
  attributes: Attributes;
}

export interface DecodedStatus {
  /** Status.StatusCode: 0 unset, 1 ok, 2 error. */
  code: number;
  message: string;
}

export interface DecodedSpan {
  /** Lowercase hex: 32 chars for a valid id, '' when absent. */
  traceId: string;
  /** Lowercase hex: 16 chars for a valid id, '' when absent. */
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  traceState: string;
  flags: number;
  name: string;
  /** Span.SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  attributes: Attributes;
  events: DecodedEvent[];
  links: DecodedLink[];
  status: DecodedStatus;
  resource: Attributes;
  scope: DecodedScope;
}

/** OTLP's Span.SpanKind numbering, which is not @opentelemetry/api's SpanKind (there INTERNAL is 0). */
export const OtlpSpanKind = {
  Unspecified: 0,
  Internal: 1,
  Server: 2,
  Client: 3,
  Producer: 4,
  Consumer: 5,
} as const;

export function hexOf(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** int64 → number when exact, so `assert.equal(attrs.count, 3)` works; bigint otherwise. */
export function int64Value(value: bigint): number | bigint {
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
}
