import type { Attributes, Link, SpanContext } from '@opentelemetry/api';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace';
import { attributes } from './common-encode.js';
import { nested, tag, Writer } from './proto-writer.js';

/**
 * Spans as the body of an OTLP/HTTP protobuf request: ExportTraceServiceRequest
 * (opentelemetry-proto: collector/trace/v1/trace_service.proto, trace/v1/trace.proto,
 * common/v1/common.proto). The bytes are exactly those @opentelemetry/otlp-transformer's
 * ProtobufTraceSerializer writes — the same fields, in the same order, with the same defaults
 * (test/unit/otlp-trace-encode.test.ts holds us to it) — written in one pass instead of two.
 *
 * Why our own: exporting spans is the largest cost of tracing we own (docs/performance.md, "CPU per
 * request"), serializing the batches most of it. The SDK's serializer measures the whole request first, then
 * writes it, and allocates a byte array per trace and span ID; this writer reserves a length's
 * byte(s) in front of each message and moves the message only when its length needs more, and
 * writes IDs straight from their hex.
 *
 * Encoding comes in two steps, so that a span can be encoded soon after it ends and wait for its
 * batch as bytes (tracing/encoded-span-queue.ts): `encodeSpans` writes each span's message, `traceRequestOf`
 * puts encoded spans into a request, grouped by resource and scope.
 */
export function encodeTraceRequest(spans: readonly ReadableSpan[]): Uint8Array {
  return traceRequestOf(encodeSpans(spans));
}

type Resource = ReadableSpan['resource'];
type Scope = ReadableSpan['instrumentationScope'];

/** A span's message as a request carries it (its field of ScopeSpans, tag and length included), with the resource and scope it is filed under. */
export class EncodedSpan {
  constructor(
    readonly resource: Resource,
    readonly instrumentationScope: Scope,
    /** The chunk its bytes are in, from `start` to `end`: one object a span where a view on them would be two. */
    readonly chunk: Uint8Array,
    readonly start: number,
    readonly end: number,
  ) {}

  get length(): number {
    return this.end - this.start;
  }
}

/** Chunks hold a few hundred ordinary spans; a span starts a new one when fewer bytes than an ordinary span's bound are left. */
const CHUNK_BYTES = 64 * 1024;
const ROOM_FOR_A_SPAN = 2048;
/** The chunk being filled; made at the first encoding (the uploads' warm-up), not when the preload loads. */
let chunk: Writer | undefined;

/**
 * Each span's message, written into a chunk of bytes shared with the spans encoded before and
 * after it: a span held as its bytes is a small object and its share of a chunk outside V8's heap,
 * where the span object kept its attributes, times and contexts in the young generation for every
 * scavenge until its batch left. A chunk is let go once the batches of all its spans have.
 */
export function encodeSpans(spans: readonly ReadableSpan[]): EncodedSpan[] {
  const encoded = new Array<EncodedSpan>(spans.length);
  for (let i = 0; i < spans.length; i++) {
    const span = spans[i]!;
    if (chunk === undefined || chunk.buf.length - chunk.pos < ROOM_FOR_A_SPAN) chunk = new Writer(CHUNK_BYTES);
    const start = chunk.pos;
    nested(chunk, SCOPE_SPANS_SPANS, 2, span, undefined, spanMessage);
    if (chunk.buf.length > CHUNK_BYTES) {
      // A span bigger than the room left grew the chunk into a larger copy: it keeps its own bytes
      // alone, not the copy, and the spans after it start a new chunk.
      const own = chunk.buf.slice(start, chunk.pos);
      encoded[i] = new EncodedSpan(span.resource, span.instrumentationScope, own, 0, own.length);
      chunk = new Writer(CHUNK_BYTES);
    } else {
      encoded[i] = new EncodedSpan(span.resource, span.instrumentationScope, chunk.buf, start, chunk.pos);
    }
  }
  return encoded;
}

/** The request for encoded spans: each resource once, each of its scopes once, the spans under them in the order given. */
export function traceRequestOf(spans: readonly EncodedSpan[]): Uint8Array {
  let size = 4096;
  for (const span of spans) size += span.length;
  const w = new Writer(size);
  for (const [resource, scopes] of groupByResourceAndScope(spans)) {
    w.tag(REQUEST_RESOURCE_SPANS);
    const resourceAt = w.start(3);
    nested(w, RESOURCE_SPANS_RESOURCE, 2, resource, undefined, resourceMessage);
    for (const [scope, list] of scopes) {
      w.tag(RESOURCE_SPANS_SCOPE_SPANS);
      const scopeAt = w.start(3);
      nested(w, SCOPE_SPANS_SCOPE, 1, scope, undefined, scopeMessage);
      writeSpans(w, list);
      if (scope.schemaUrl) {
        w.tag(SCOPE_SPANS_SCHEMA_URL);
        w.string(scope.schemaUrl);
      }
      w.end(scopeAt, 3);
    }
    if (resource.schemaUrl) {
      w.tag(RESOURCE_SPANS_SCHEMA_URL);
      w.string(resource.schemaUrl);
    }
    w.end(resourceAt, 3);
  }
  return w.buf.subarray(0, w.pos);
}

/** Spans encoded one after the other in one chunk (most of a batch) are copied as one run. */
function writeSpans(w: Writer, list: readonly EncodedSpan[]): void {
  for (let i = 0; i < list.length; ) {
    const first = list[i]!;
    let end = first.end;
    for (i++; i < list.length && list[i]!.chunk === first.chunk && list[i]!.start === end; i++) end = list[i]!.end;
    w.raw(first.chunk, first.start, end);
  }
}

/**
 * Runs the encoder once on a made-up span (every field kind: parent, attributes of each value
 * type, an event, a link, a status message) so that its code is compiled before the app runs (the
 * uploads' warm-up in the preload, uploads.ts) and not inside the turn that encodes the first real
 * spans, where it would hold the app's event loop (bench/big-app.mjs measures that first second).
 */
export function prepareTraceEncoder(): void {
  encodeTraceRequest([WARM_UP_SPAN]);
}

const WARM_UP_CONTEXT = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 };
const WARM_UP_SPAN = {
  name: 'warm-up',
  kind: 1,
  spanContext: () => WARM_UP_CONTEXT,
  parentSpanContext: { ...WARM_UP_CONTEXT, spanId: '00f067aa0ba902b7', isRemote: true },
  startTime: [0, 0],
  endTime: [0, 1],
  attributes: { text: 'a', int: 1, double: 0.5, flag: true, list: ['a', 1], bytes: new Uint8Array(1), map: { a: 1 } },
  droppedAttributesCount: 0,
  events: [{ name: 'event', time: [0, 0], attributes: { a: 1 }, droppedAttributesCount: 0 }],
  droppedEventsCount: 0,
  links: [{ context: WARM_UP_CONTEXT, attributes: { a: 1 }, droppedAttributesCount: 0 }],
  droppedLinksCount: 0,
  status: { code: 2, message: 'warm-up' },
  resource: { attributes: { 'service.name': 'warm-up' } },
  instrumentationScope: { name: 'warm-up', version: '0' },
  duration: [0, 1],
  ended: true,
} as unknown as ReadableSpan;

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

/** SpanFlags (trace.proto): the W3C trace flags, and whether the parent's context was remote. */
const FLAGS_HAS_IS_REMOTE = 0x100;
const FLAGS_IS_REMOTE = 0x200;
const spanFlags = (traceFlags: number, isRemote: boolean | undefined) => (traceFlags & 0xff) | FLAGS_HAS_IS_REMOTE | (isRemote ? FLAGS_IS_REMOTE : 0);

/** Encoded spans by resource, then by instrumentation scope (by identity, in order of first appearance). */
function groupByResourceAndScope(spans: readonly EncodedSpan[]): Map<Resource, Map<Scope, EncodedSpan[]>> {
  const resources = new Map<Resource, Map<Scope, EncodedSpan[]>>();
  for (const span of spans) {
    let scopes = resources.get(span.resource);
    if (scopes === undefined) resources.set(span.resource, (scopes = new Map()));
    let list = scopes.get(span.instrumentationScope);
    if (list === undefined) scopes.set(span.instrumentationScope, (list = []));
    list.push(span);
  }
  return resources;
}

function resourceMessage(w: Writer, resource: Resource): void {
  attributes(w, resource.attributes, RESOURCE_ATTRIBUTES);
  w.tag(RESOURCE_DROPPED_ATTRIBUTES);
  w.varint(0);
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
