// Decodes an OTLP/JSON ExportTraceServiceRequest into the same shape as the
// protobuf decoder. OTLP/JSON rules (opentelemetry-proto docs/specification.md,
// "JSON Protobuf Encoding"): trace/span ids are hex strings (not base64), enums
// are integers, 64-bit integers may be strings or numbers, bytes are base64,
// keys are lowerCamelCase. Like the collector's decoder we also accept the
// original snake_case names.

import {
  int64Value,
  type AttributeValue,
  type Attributes,
  type DecodedEvent,
  type DecodedLink,
  type DecodedScope,
  type DecodedSpan,
  type DecodedStatus,
} from './otlp-types.js';

export class OtlpJsonError extends Error {
  override name = 'OtlpJsonError';
}

type Json = Record<string, unknown>;

function obj(value: unknown, where: string): Json {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new OtlpJsonError(`${where}: expected an object`);
  return value as Json;
}

function list(value: unknown, where: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new OtlpJsonError(`${where}: expected an array`);
  return value;
}

function get(o: Json, camel: string, snake?: string): unknown {
  return o[camel] ?? (snake === undefined ? undefined : o[snake]);
}

function str(value: unknown, where: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new OtlpJsonError(`${where}: expected a string`);
  return value;
}

function int(value: unknown, where: string): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new OtlpJsonError(`${where}: expected an integer (OTLP/JSON enums are numbers)`);
  }
  return value;
}

function int64(value: unknown, where: string): bigint {
  if (value === undefined || value === null) return 0n;
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
  throw new OtlpJsonError(`${where}: expected a 64-bit integer as a string or number`);
}

function double(value: unknown, where: string): number {
  if (typeof value === 'number') return value;
  if (value === 'NaN') return Number.NaN;
  if (value === 'Infinity') return Number.POSITIVE_INFINITY;
  if (value === '-Infinity') return Number.NEGATIVE_INFINITY;
  throw new OtlpJsonError(`${where}: expected a number`);
}

/** Ids are hex in OTLP/JSON; empty means absent. */
function id(value: unknown, bytes: number, where: string): string {
  const hex = str(value, where);
  if (hex === '') return '';
  if (hex.length !== bytes * 2 || !/^[0-9a-fA-F]+$/.test(hex)) {
    throw new OtlpJsonError(`${where}: expected ${bytes * 2} hex characters, got ${JSON.stringify(hex)}`);
  }
  return hex.toLowerCase();
}

export function decodeTraceRequestJson(text: string): DecodedSpan[] {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch (error) {
    throw new OtlpJsonError(`invalid JSON: ${(error as Error).message}`);
  }
  const request = obj(root, 'ExportTraceServiceRequest');
  return list(get(request, 'resourceSpans', 'resource_spans'), 'resourceSpans').flatMap((rs, i) => decodeResourceSpans(obj(rs, `resourceSpans[${i}]`)));
}

function decodeResourceSpans(rs: Json): DecodedSpan[] {
  const resource = attributes(get(obj(rs.resource, 'resource'), 'attributes'), 'resource.attributes');
  return list(get(rs, 'scopeSpans', 'scope_spans'), 'scopeSpans').flatMap((ss, i) => {
    const scopeSpans = obj(ss, `scopeSpans[${i}]`);
    const scope = decodeScope(obj(scopeSpans.scope, 'scope'));
    return list(scopeSpans.spans, 'spans').map((s, j) => decodeSpan(obj(s, `spans[${j}]`), resource, scope));
  });
}

function decodeScope(scope: Json): DecodedScope {
  return {
    name: str(scope.name, 'scope.name'),
    version: str(scope.version, 'scope.version'),
    attributes: attributes(scope.attributes, 'scope.attributes'),
  };
}

function decodeSpan(s: Json, resource: Attributes, scope: DecodedScope): DecodedSpan {
  return {
    traceId: id(get(s, 'traceId', 'trace_id'), 16, 'span.traceId'),
    spanId: id(get(s, 'spanId', 'span_id'), 8, 'span.spanId'),
    parentSpanId: id(get(s, 'parentSpanId', 'parent_span_id'), 8, 'span.parentSpanId'),
    traceState: str(get(s, 'traceState', 'trace_state'), 'span.traceState'),
    flags: int(s.flags, 'span.flags'),
    name: str(s.name, 'span.name'),
    kind: int(s.kind, 'span.kind'),
    startTimeUnixNano: int64(get(s, 'startTimeUnixNano', 'start_time_unix_nano'), 'span.startTimeUnixNano'),
    endTimeUnixNano: int64(get(s, 'endTimeUnixNano', 'end_time_unix_nano'), 'span.endTimeUnixNano'),
    attributes: attributes(s.attributes, 'span.attributes'),
    events: list(s.events, 'span.events').map((e, i) => decodeEvent(obj(e, `span.events[${i}]`))),
    links: list(s.links, 'span.links').map((l, i) => decodeLink(obj(l, `span.links[${i}]`))),
    status: decodeStatus(obj(s.status, 'span.status')),
    resource,
    scope,
  };
}

function decodeEvent(e: Json): DecodedEvent {
  return {
    name: str(e.name, 'event.name'),
    timeUnixNano: int64(get(e, 'timeUnixNano', 'time_unix_nano'), 'event.timeUnixNano'),
    attributes: attributes(e.attributes, 'event.attributes'),
  };
}

function decodeLink(l: Json): DecodedLink {
  return {
    traceId: id(get(l, 'traceId', 'trace_id'), 16, 'link.traceId'),
    spanId: id(get(l, 'spanId', 'span_id'), 8, 'link.spanId'),
    traceState: str(get(l, 'traceState', 'trace_state'), 'link.traceState'),
    attributes: attributes(l.attributes, 'link.attributes'),
  };
}

function decodeStatus(s: Json): DecodedStatus {
  return { code: int(s.code, 'status.code'), message: str(s.message, 'status.message') };
}

function attributes(value: unknown, where: string): Attributes {
  const out: Attributes = {};
  list(value, where).forEach((kv, i) => {
    const pair = obj(kv, `${where}[${i}]`);
    out[str(pair.key, `${where}[${i}].key`)] = anyValue(obj(pair.value, `${where}[${i}].value`), `${where}[${i}]`);
  });
  return out;
}

function anyValue(v: Json, where: string): AttributeValue {
  const s = get(v, 'stringValue', 'string_value');
  if (s !== undefined) return str(s, where);
  const b = get(v, 'boolValue', 'bool_value');
  if (b !== undefined) {
    if (typeof b !== 'boolean') throw new OtlpJsonError(`${where}: boolValue must be a boolean`);
    return b;
  }
  const i = get(v, 'intValue', 'int_value');
  if (i !== undefined) return int64Value(int64(i, where));
  const d = get(v, 'doubleValue', 'double_value');
  if (d !== undefined) return double(d, where);
  const a = get(v, 'arrayValue', 'array_value');
  if (a !== undefined) {
    return list(obj(a, where).values, where).map((item, n) => anyValue(obj(item, `${where}[${n}]`), `${where}[${n}]`));
  }
  const kv = get(v, 'kvlistValue', 'kvlist_value');
  if (kv !== undefined) return attributes(obj(kv, where).values, where);
  const bytes = get(v, 'bytesValue', 'bytes_value');
  if (bytes !== undefined) return Uint8Array.from(Buffer.from(str(bytes, where), 'base64'));
  return null;
}
