import type { Attributes, HrTime, Link, SpanContext } from '@opentelemetry/api';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace';
import { varintLength, writeVarint } from '../../util/varint.js';

/**
 * A span batch as the body of an OTLP/HTTP protobuf request: ExportTraceServiceRequest
 * (opentelemetry-proto: collector/trace/v1/trace_service.proto, trace/v1/trace.proto,
 * common/v1/common.proto). The bytes are exactly those @opentelemetry/otlp-transformer's
 * ProtobufTraceSerializer writes — the same fields, in the same order, with the same defaults
 * (test/unit/otlp-trace-encode.test.ts holds us to it) — written in one pass instead of two.
 *
 * Why our own: exporting spans is the largest cost of tracing we own. Side by side on the express
 * app (two processes on one core, CPU time per request), serializing the batches took ~6% of each
 * request's CPU and sending them ~3%. The SDK's serializer measures the whole request first, then
 * writes it, and allocates a byte array per trace and span ID; this writer reserves a length's
 * byte(s) in front of each message and moves the message only when its length needs more, and
 * writes IDs straight from their hex.
 */
export function encodeTraceRequest(spans: readonly ReadableSpan[]): Uint8Array {
  const w = new Writer(spans.length * bytesPerSpan + 4096);
  for (const [resource, scopes] of groupByResourceAndScope(spans)) nested(w, REQUEST_RESOURCE_SPANS, 3, resource, scopes, resourceSpans);
  if (spans.length > 0) bytesPerSpan = Math.min(MAX_BYTES_PER_SPAN, Math.ceil(w.pos / spans.length) + 16);
  return w.buf.subarray(0, w.pos);
}

/** The last batch's size per span, so a batch's buffer is rarely grown. */
let bytesPerSpan = 256;
/** Bounds the guess: one batch of a few huge spans must not make every later batch allocate megabytes. */
const MAX_BYTES_PER_SPAN = 2048;

/** Field tags (field number << 3 | wire type: 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32). */
const tag = (field: number, wire: number) => (field << 3) | wire;
const REQUEST_RESOURCE_SPANS = tag(1, 2);
const RESOURCE_SPANS_RESOURCE = tag(1, 2);
const RESOURCE_SPANS_SCOPE_SPANS = tag(2, 2);
const RESOURCE_SPANS_SCHEMA_URL = tag(3, 2);
const RESOURCE_ATTRIBUTES = tag(1, 2);
const RESOURCE_DROPPED_ATTRIBUTES = tag(2, 0);
const SCOPE_SPANS_SCOPE = tag(1, 2);
const SCOPE_SPANS_SPANS = tag(2, 2);
const SCOPE_SPANS_SCHEMA_URL = tag(3, 2);
const SCOPE_NAME = tag(1, 2);
const SCOPE_VERSION = tag(2, 2);
const SCOPE_ATTRIBUTES = tag(3, 2);
const SCOPE_DROPPED_ATTRIBUTES = tag(4, 0);
const SPAN_TRACE_ID = tag(1, 2);
const SPAN_SPAN_ID = tag(2, 2);
const SPAN_TRACE_STATE = tag(3, 2);
const SPAN_PARENT_SPAN_ID = tag(4, 2);
const SPAN_NAME = tag(5, 2);
const SPAN_KIND = tag(6, 0);
const SPAN_START = tag(7, 1);
const SPAN_END = tag(8, 1);
const SPAN_ATTRIBUTES = tag(9, 2);
const SPAN_DROPPED_ATTRIBUTES = tag(10, 0);
const SPAN_EVENTS = tag(11, 2);
const SPAN_DROPPED_EVENTS = tag(12, 0);
const SPAN_LINKS = tag(13, 2);
const SPAN_DROPPED_LINKS = tag(14, 0);
const SPAN_STATUS = tag(15, 2);
const SPAN_FLAGS = tag(16, 5);
const EVENT_TIME = tag(1, 1);
const EVENT_NAME = tag(2, 2);
const EVENT_ATTRIBUTES = tag(3, 2);
const EVENT_DROPPED_ATTRIBUTES = tag(4, 0);
const LINK_TRACE_ID = tag(1, 2);
const LINK_SPAN_ID = tag(2, 2);
const LINK_TRACE_STATE = tag(3, 2);
const LINK_ATTRIBUTES = tag(4, 2);
const LINK_DROPPED_ATTRIBUTES = tag(5, 0);
const LINK_FLAGS = tag(6, 5);
const STATUS_MESSAGE = tag(2, 2);
const STATUS_CODE = tag(3, 0);
const KEY_VALUE_KEY = tag(1, 2);
const KEY_VALUE_VALUE = tag(2, 2);
const ANY_STRING = tag(1, 2);
const ANY_BOOL = tag(2, 0);
const ANY_INT = tag(3, 0);
const ANY_DOUBLE = tag(4, 1);
const ANY_ARRAY = tag(5, 2);
const ANY_KVLIST = tag(6, 2);
const ANY_BYTES = tag(7, 2);
const ARRAY_VALUES = tag(1, 2);
const KVLIST_VALUES = tag(1, 2);

/** SpanFlags (trace.proto): the W3C trace flags, and whether the parent's context was remote. */
const FLAGS_HAS_IS_REMOTE = 0x100;
const FLAGS_IS_REMOTE = 0x200;
const spanFlags = (traceFlags: number, isRemote: boolean | undefined) => (traceFlags & 0xff) | FLAGS_HAS_IS_REMOTE | (isRemote ? FLAGS_IS_REMOTE : 0);

type Resource = ReadableSpan['resource'];
type Scope = ReadableSpan['instrumentationScope'];

/** Spans by resource, then by instrumentation scope (by identity, in order of first appearance). */
function groupByResourceAndScope(spans: readonly ReadableSpan[]): Map<Resource, Map<Scope, ReadableSpan[]>> {
  const resources = new Map<Resource, Map<Scope, ReadableSpan[]>>();
  for (const span of spans) {
    let scopes = resources.get(span.resource);
    if (scopes === undefined) resources.set(span.resource, (scopes = new Map()));
    let list = scopes.get(span.instrumentationScope);
    if (list === undefined) scopes.set(span.instrumentationScope, (list = []));
    list.push(span);
  }
  return resources;
}

/**
 * A message in field `field`: its tag, then its length, then what `write` writes, the length put in
 * front once known (`reserve` bytes are kept for it, a guess; see Writer.end).
 */
function nested<A, B>(w: Writer, field: number, reserve: number, a: A, b: B, write: (w: Writer, a: A, b: B) => void): void {
  w.tag(field);
  const at = w.start(reserve);
  write(w, a, b);
  w.end(at, reserve);
}

function resourceSpans(w: Writer, resource: Resource, scopes: Map<Scope, ReadableSpan[]>): void {
  nested(w, RESOURCE_SPANS_RESOURCE, 2, resource, undefined, resourceMessage);
  for (const [scope, spans] of scopes) nested(w, RESOURCE_SPANS_SCOPE_SPANS, 3, scope, spans, scopeSpans);
  if (resource.schemaUrl) {
    w.tag(RESOURCE_SPANS_SCHEMA_URL);
    w.string(resource.schemaUrl);
  }
}

function resourceMessage(w: Writer, resource: Resource): void {
  attributes(w, resource.attributes, RESOURCE_ATTRIBUTES);
  w.tag(RESOURCE_DROPPED_ATTRIBUTES);
  w.varint(0);
}

function scopeSpans(w: Writer, scope: Scope, spans: ReadableSpan[]): void {
  nested(w, SCOPE_SPANS_SCOPE, 1, scope, undefined, scopeMessage);
  for (const span of spans) nested(w, SCOPE_SPANS_SPANS, 2, span, undefined, spanMessage);
  if (scope.schemaUrl) {
    w.tag(SCOPE_SPANS_SCHEMA_URL);
    w.string(scope.schemaUrl);
  }
}

function scopeMessage(w: Writer, scope: Scope): void {
  w.tag(SCOPE_NAME);
  w.string(scope.name);
  if (scope.version) {
    w.tag(SCOPE_VERSION);
    w.string(scope.version);
  }
  const extra = scope as { attributes?: Attributes; droppedAttributesCount?: number };
  if (extra.attributes) attributes(w, extra.attributes, SCOPE_ATTRIBUTES);
  if (extra.droppedAttributesCount) {
    w.tag(SCOPE_DROPPED_ATTRIBUTES);
    w.varint(extra.droppedAttributesCount);
  }
}

function spanMessage(w: Writer, span: ReadableSpan): void {
  const context = span.spanContext();
  const parent = span.parentSpanContext;
  ids(w, context, SPAN_TRACE_ID, SPAN_SPAN_ID, SPAN_TRACE_STATE);
  if (parent?.spanId) {
    w.tag(SPAN_PARENT_SPAN_ID);
    w.hex(parent.spanId);
  }
  w.tag(SPAN_NAME);
  w.string(span.name);
  // OTLP's SpanKind counts from SPAN_KIND_UNSPECIFIED = 0; the API's from INTERNAL = 0.
  const kind = span.kind == null ? 0 : span.kind + 1;
  if (kind !== 0) {
    w.tag(SPAN_KIND);
    w.varint(kind);
  }
  w.tag(SPAN_START);
  w.time(span.startTime);
  w.tag(SPAN_END);
  w.time(span.endTime);
  if (span.attributes) attributes(w, span.attributes, SPAN_ATTRIBUTES);
  w.tag(SPAN_DROPPED_ATTRIBUTES);
  w.varint(span.droppedAttributesCount);
  for (const event of span.events) nested(w, SPAN_EVENTS, 1, event, undefined, eventMessage);
  w.tag(SPAN_DROPPED_EVENTS);
  w.varint(span.droppedEventsCount);
  for (const link of span.links) nested(w, SPAN_LINKS, 1, link, undefined, linkMessage);
  w.tag(SPAN_DROPPED_LINKS);
  w.varint(span.droppedLinksCount);
  nested(w, SPAN_STATUS, 1, span.status, undefined, statusMessage);
  w.tag(SPAN_FLAGS);
  w.fixed32(spanFlags(context.traceFlags, parent?.isRemote));
}

function statusMessage(w: Writer, status: ReadableSpan['status']): void {
  if (status.message) {
    w.tag(STATUS_MESSAGE);
    w.string(status.message);
  }
  w.tag(STATUS_CODE);
  w.varint(status.code);
}

function eventMessage(w: Writer, event: TimedEvent): void {
  w.tag(EVENT_TIME);
  w.time(event.time);
  w.tag(EVENT_NAME);
  w.string(event.name);
  if (event.attributes) attributes(w, event.attributes, EVENT_ATTRIBUTES);
  w.tag(EVENT_DROPPED_ATTRIBUTES);
  w.varint(event.droppedAttributesCount || 0);
}

function linkMessage(w: Writer, link: Link): void {
  const context = link.context;
  ids(w, context, LINK_TRACE_ID, LINK_SPAN_ID, LINK_TRACE_STATE);
  if (link.attributes) attributes(w, link.attributes, LINK_ATTRIBUTES);
  w.tag(LINK_DROPPED_ATTRIBUTES);
  w.varint(link.droppedAttributesCount || 0);
  w.tag(LINK_FLAGS);
  w.fixed32(spanFlags(context.traceFlags, context.isRemote));
}

/** A span's or a link's trace ID, span ID and trace state (if any), the three fields Span and Link share. */
function ids(w: Writer, context: SpanContext, traceIdField: number, spanIdField: number, stateField: number): void {
  w.tag(traceIdField);
  w.hex(context.traceId);
  w.tag(spanIdField);
  w.hex(context.spanId);
  const state = context.traceState?.serialize();
  if (!state) return;
  w.tag(stateField);
  w.string(state);
}

const hasOwn = Object.prototype.hasOwnProperty;

/** Repeated KeyValue under `field` (an object's own enumerable properties, as the SDK's serializer takes them). */
function attributes(w: Writer, attrs: Attributes | Record<string, unknown>, field: number): void {
  for (const key in attrs) {
    if (hasOwn.call(attrs, key)) nested(w, field, 1, key, (attrs as Record<string, unknown>)[key], keyValue);
  }
}

function keyValue(w: Writer, key: string, value: unknown): void {
  w.tag(KEY_VALUE_KEY);
  w.string(key);
  nested(w, KEY_VALUE_VALUE, 1, value, undefined, anyValue);
}

const MIN_INT64 = -(2 ** 63);
const MAX_INT64_EXCLUSIVE = 2 ** 63;

/** AnyValue's fields as the SDK's serializer picks them; anything else (null, undefined, bigint) is an empty AnyValue. */
function anyValue(w: Writer, value: unknown): void {
  const type = typeof value;
  if (type === 'string') {
    w.tag(ANY_STRING);
    w.string(value as string);
  } else if (type === 'boolean') {
    w.tag(ANY_BOOL);
    w.varint(value ? 1 : 0);
  } else if (type === 'number') {
    const n = value as number;
    if (Number.isInteger(n) && n >= MIN_INT64 && n < MAX_INT64_EXCLUSIVE) {
      w.tag(ANY_INT);
      w.varint(n);
    } else {
      w.tag(ANY_DOUBLE);
      w.double(n);
    }
  } else if (value instanceof Uint8Array) {
    w.tag(ANY_BYTES);
    w.bytes(value);
  } else if (Array.isArray(value)) {
    nested(w, ANY_ARRAY, 1, value, undefined, arrayValue);
  } else if (type === 'object' && value != null) {
    nested(w, ANY_KVLIST, 1, value as Record<string, unknown>, KVLIST_VALUES, attributes);
  }
}

function arrayValue(w: Writer, items: unknown[]): void {
  for (const item of items) nested(w, ARRAY_VALUES, 1, item, undefined, anyValue);
}

const TWO_32 = 2 ** 32;
const scratch = new DataView(new ArrayBuffer(8));
const textEncoder = new TextEncoder();

/** A growing buffer written front to back; a message's length goes in front of it once it is known. */
class Writer {
  buf: Uint8Array;
  pos = 0;

  constructor(size: number) {
    this.buf = new Uint8Array(size);
  }

  /** Tags of fields 1–15 are one byte; field 16 (span and link flags) takes two. */
  tag(value: number): void {
    if (value < 128) {
      this.ensure(1);
      this.buf[this.pos++] = value;
    } else {
      this.varint(value);
    }
  }

  /** Room for a message's length (`reserve` bytes, a guess); returns where the length goes. */
  start(reserve: number): number {
    this.ensure(reserve);
    const at = this.pos;
    this.pos += reserve;
    return at;
  }

  /** Writes the length of the message begun at `at`, moving the message if its length takes more or fewer bytes than reserved. */
  end(at: number, reserve: number): void {
    const length = this.pos - at - reserve;
    const size = varintLength(length);
    if (size !== reserve) {
      if (size > reserve) this.ensure(size - reserve);
      this.buf.copyWithin(at + size, at + reserve, this.pos);
      this.pos += size - reserve;
    }
    writeVarint(this.buf, at, length);
  }

  /** A varint, negative integers as their 64-bit two's complement (ten bytes), as int64 fields take them. */
  varint(value: number): void {
    this.ensure(10);
    if (value >= 0 && value <= Number.MAX_SAFE_INTEGER) {
      this.pos = writeVarint(this.buf, this.pos, value);
      return;
    }
    let low: number;
    let high: number;
    if (value >= 0) {
      low = value >>> 0;
      high = (value / TWO_32) >>> 0;
    } else {
      const magnitude = -value;
      low = ~(magnitude >>> 0) >>> 0;
      high = ~((magnitude / TWO_32) >>> 0) >>> 0;
      low = (low + 1) >>> 0;
      if (low === 0) high = (high + 1) >>> 0;
    }
    while (high > 0 || low > 127) {
      this.buf[this.pos++] = (low & 127) | 128;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    this.buf[this.pos++] = low;
  }

  fixed32(value: number): void {
    this.ensure(4);
    const b = this.buf;
    let p = this.pos;
    b[p++] = value;
    b[p++] = value >>> 8;
    b[p++] = value >>> 16;
    b[p++] = value >>> 24;
    this.pos = p;
  }

  /** An HrTime ([seconds, nanoseconds]) as fixed64 nanoseconds since the epoch, exact beyond 2^53. */
  time(time: HrTime): void {
    const seconds = time[0];
    // seconds × 1e9 = (upper × 1e9) × 2^16 + lower × 1e9, each product exact in a double.
    const upper = Math.floor(seconds / 65536) * 1e9;
    const lower = (seconds % 65536) * 1e9 + time[1];
    const upperHigh = Math.floor(upper / 65536);
    const low = (upper % 65536) * 65536 + lower;
    const high = upperHigh + Math.floor(low / TWO_32);
    this.fixed32(low % TWO_32);
    this.fixed32(high % TWO_32);
  }

  double(value: number): void {
    scratch.setFloat64(0, value, true);
    this.ensure(8);
    for (let i = 0; i < 8; i++) this.buf[this.pos++] = scratch.getUint8(i);
  }

  bytes(value: Uint8Array): void {
    this.varint(value.length);
    this.ensure(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  /** UTF-8, written directly while the string is ASCII (nearly every attribute is). */
  string(value: string): void {
    const length = value.length;
    const lengthSize = varintLength(length);
    this.ensure(lengthSize + length);
    const b = this.buf;
    let p = this.pos + lengthSize;
    for (let i = 0; i < length; i++) {
      const c = value.charCodeAt(i);
      if (c > 127) {
        this.bytes(textEncoder.encode(value));
        return;
      }
      b[p++] = c;
    }
    writeVarint(b, this.pos, length);
    this.pos = p;
  }

  /** A trace or span ID from its hex form, as bytes (two hex digits a byte, as the SDK's hexToBinary reads them). */
  hex(value: string): void {
    const length = value.length >>> 1;
    this.varint(length);
    this.ensure(length);
    const b = this.buf;
    for (let i = 0; i < length; i++) b[this.pos++] = (hexDigit(value.charCodeAt(2 * i)) << 4) | hexDigit(value.charCodeAt(2 * i + 1));
  }

  private ensure(room: number): void {
    if (this.pos + room <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + room) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.buf.subarray(0, this.pos));
    this.buf = grown;
  }
}

/** 0–9, a–f, A–F (other characters give what the SDK's reading gives them; IDs are validated before they get here). */
function hexDigit(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  return code - 55;
}
