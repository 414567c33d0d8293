/**
 * OTLP/JSON span batches (one ExportTraceServiceRequest per line, as the collector's file
 * exporter writes them) → the few span fields a report needs. OTLP/JSON allows 64-bit integers
 * as strings or numbers, so times and int attributes are read either way.
 */
import { ATTR_HTTP_ROUTE, ATTR_HTTP_STATUS_CODE, ATTR_PROFILE_ID, ATTR_URL_PATH } from '../wire.js';

export interface RunSpan {
  spanId: string;
  traceId: string;
  /** Undefined for a trace's root span. */
  parentSpanId: string | undefined;
  name: string;
  /** OTLP SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  /** Epoch nanoseconds; bigint because they exceed 2^53. */
  startNs: bigint;
  endNs: bigint;
  /** endNs - startNs, small enough for a number. */
  durationNs: number;
  /** `pyroscope.profile.id`: set on the spans whose ID profile samples carry. */
  profileId: string | undefined;
  route: string | undefined;
  urlPath: string | undefined;
  statusCode: number | undefined;
  /** The span's OTLP status is ERROR. */
  error: boolean;
  /** `db.system` (or `db.system.name`): the span is a database call. */
  dbSystem: string | undefined;
  /** `db.query.text` (or `db.statement`), as recorded (sanitized unless the run kept them raw). */
  statement: string | undefined;
  /** `http.request.method` (or `http.method`) of an outgoing request. */
  httpMethod: string | undefined;
  /** Where an outgoing call went: `server.address` (or `net.peer.name`). */
  serverAddress: string | undefined;
}

interface OtlpValue {
  stringValue?: unknown;
  intValue?: unknown;
  doubleValue?: unknown;
}

interface OtlpSpan {
  spanId?: unknown;
  traceId?: unknown;
  parentSpanId?: unknown;
  name?: unknown;
  kind?: unknown;
  startTimeUnixNano?: unknown;
  endTimeUnixNano?: unknown;
  status?: { code?: unknown };
  attributes?: { key?: unknown; value?: OtlpValue }[];
}

interface OtlpRequest {
  resourceSpans?: { scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

/** Database and client attributes the report reads, the current semantic conventions' name first. */
const ATTR_DB_SYSTEM = ['db.system.name', 'db.system'];
const ATTR_DB_STATEMENT = ['db.query.text', 'db.statement'];
const ATTR_HTTP_METHODS = ['http.request.method', 'http.method'];
const ATTR_SERVER_ADDRESS = ['server.address', 'net.peer.name'];

function firstString(attributes: ReadonlyMap<string, OtlpValue | undefined>, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = stringOf(attributes.get(name));
    if (value !== undefined) return value;
  }
  return undefined;
}

/** OTLP Status.code ERROR (trace.proto StatusCode). */
const STATUS_CODE_ERROR = 2;

function nanos(value: unknown): bigint | undefined {
  if (typeof value === 'string' && /^\d+$/.test(value)) return BigInt(value);
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  return undefined;
}

function stringOf(value: OtlpValue | undefined): string | undefined {
  return typeof value?.stringValue === 'string' ? value.stringValue : undefined;
}

function intOf(value: OtlpValue | undefined): number | undefined {
  const raw = value?.intValue ?? value?.doubleValue;
  const number = typeof raw === 'string' ? Number(raw) : raw;
  return typeof number === 'number' && Number.isFinite(number) ? number : undefined;
}

/** One OTLP span → RunSpan, or why it cannot be one. */
function toRunSpan(span: OtlpSpan): RunSpan | string {
  if (typeof span.spanId !== 'string' || span.spanId === '') return 'a span has no spanId';
  if (typeof span.traceId !== 'string' || span.traceId === '') return `span ${span.spanId} has no traceId`;
  const startNs = nanos(span.startTimeUnixNano);
  const endNs = nanos(span.endTimeUnixNano);
  if (startNs === undefined || endNs === undefined) return `span ${span.spanId} has no valid start/end time`;
  const attributes = new Map<string, OtlpValue | undefined>();
  for (const attribute of span.attributes ?? []) {
    if (typeof attribute.key === 'string') attributes.set(attribute.key, attribute.value);
  }
  return {
    spanId: span.spanId.toLowerCase(),
    traceId: span.traceId.toLowerCase(),
    parentSpanId: typeof span.parentSpanId === 'string' && span.parentSpanId !== '' ? span.parentSpanId.toLowerCase() : undefined,
    name: typeof span.name === 'string' ? span.name : '',
    kind: typeof span.kind === 'number' ? span.kind : 0,
    startNs,
    endNs,
    durationNs: endNs > startNs ? Number(endNs - startNs) : 0,
    profileId: stringOf(attributes.get(ATTR_PROFILE_ID))?.toLowerCase(),
    route: stringOf(attributes.get(ATTR_HTTP_ROUTE)),
    urlPath: stringOf(attributes.get(ATTR_URL_PATH)),
    statusCode: intOf(attributes.get(ATTR_HTTP_STATUS_CODE)),
    error: span.status?.code === STATUS_CODE_ERROR,
    dbSystem: firstString(attributes, ATTR_DB_SYSTEM),
    statement: firstString(attributes, ATTR_DB_STATEMENT),
    httpMethod: firstString(attributes, ATTR_HTTP_METHODS),
    serverAddress: firstString(attributes, ATTR_SERVER_ADDRESS),
  };
}

/** Appends the spans of a .jsonl file's text to `into`; returns what is wrong with it, if anything. */
export function readSpanBatch(text: string, into: RunSpan[]): string | undefined {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === '') continue;
    let request: OtlpRequest;
    try {
      request = JSON.parse(line) as OtlpRequest;
    } catch (error) {
      return `line ${i + 1} is not JSON: ${(error as Error).message}`;
    }
    if (typeof request !== 'object' || request === null || !Array.isArray(request.resourceSpans)) {
      return `line ${i + 1} is not an OTLP/JSON ExportTraceServiceRequest (no resourceSpans)`;
    }
    for (const resource of request.resourceSpans) {
      for (const scope of resource.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          const parsed = toRunSpan(span);
          if (typeof parsed === 'string') return `line ${i + 1}: ${parsed}`;
          into.push(parsed);
        }
      }
    }
  }
  return undefined;
}
