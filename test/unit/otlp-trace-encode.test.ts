/**
 * Our OTLP/protobuf span encoder must write exactly the bytes the SDK's ProtobufTraceSerializer
 * writes (what OpenTelemetry's own exporter would send), for whatever spans the SDK makes — and
 * what it writes must decode, with our independent decoder, to the spans we made.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type Attributes, type Context, type Link, ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { type ReadableSpan, type SpanLimits, type SpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { TraceState } from '@opentelemetry/core';
import { type EncodedSpan, encodeSpans, encodeTraceRequest, prepareTraceEncoder, traceRequestOf } from '../../src/export/otlp/otlp-trace-encode.js';
import { spanWith } from '../../src/tracing/span-view.js';
import { decodeTraceRequestProto } from '../support/otlp-decode-proto.js';
import { OtlpSpanKind } from '../support/otlp-types.js';

/** A provider whose ended spans are collected, as the SDK hands them to span processors. */
function collectingProvider(resource: Attributes, schemaUrl?: string, spanLimits?: SpanLimits) {
  const ended: ReadableSpan[] = [];
  const collector: SpanProcessor = {
    onStart: () => {},
    onEnd: (span) => void ended.push(span),
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
  const provider = new TracerProvider({
    resource: resourceFromAttributes(resource, schemaUrl ? { schemaUrl } : {}),
    spanProcessors: [collector],
    ...(spanLimits && { spanLimits }),
  });
  return { provider, ended };
}

/** Deterministic pseudo-random numbers (mulberry32), so a failure is the same failure on every run. */
function randomSource(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const hex = (length: number) => Array.from({ length }, () => '0123456789abcdef'[int(16)]).join('');
  return { next, int, pick, hex };
}

type Random = ReturnType<typeof randomSource>;

// Strings that change how they are written: empty, non-ASCII (two-, three-, four-byte UTF-8, a lone
// surrogate), and long enough for two- and three-byte lengths, which move a message once written.
const STRINGS = [
  '',
  'GET',
  '/users/:id',
  'é',
  'naïve café',
  '名前',
  '🔥 hot path',
  'lone \ud800 surrogate',
  'x'.repeat(127),
  'y'.repeat(200),
  'z'.repeat(20_000),
];
// Numbers on each side of every boundary the writer treats differently.
const NUMBERS = [
  0,
  -0,
  1,
  127,
  128,
  16_383,
  16_384,
  2 ** 31,
  2 ** 32 - 1,
  2 ** 32,
  2 ** 40 + 7,
  2 ** 53 + 2,
  2 ** 63,
  -1,
  -(2 ** 31),
  -(2 ** 40) - 3,
  -(2 ** 63),
  1.5,
  -0.25,
  Number.MAX_VALUE,
  Number.EPSILON,
  NaN,
  Infinity,
  -Infinity,
];

function attributeValue(r: Random): Attributes[string] {
  switch (r.int(6)) {
    case 0:
    case 1:
      return r.pick(STRINGS);
    case 2:
      return r.pick(NUMBERS);
    case 3:
      return r.next() < 0.5;
    case 4:
      return Array.from({ length: r.int(4) }, () => r.pick(STRINGS.slice(0, 8)));
    default:
      return [r.pick(NUMBERS), null, r.pick(NUMBERS), undefined] as Attributes[string];
  }
}

function attributesOf(r: Random, max: number): Attributes {
  const out: Attributes = {};
  for (let i = r.int(max + 1); i > 0; i--) out[`${r.pick(['http', 'net', 'db', 'ключ', 'express'])}.${r.int(50)}`] = attributeValue(r);
  return out;
}

/** An HrTime anywhere a clock can put one: from the epoch to beyond 2^32 seconds. */
function hrTime(r: Random): [number, number] {
  return [r.pick([0, 1, 1_700_000_000 + r.int(100_000_000), 2 ** 32 + r.int(1000), r.int(2 ** 33)]), r.int(1e9)];
}

function spanContextOf(r: Random, isRemote: boolean) {
  return {
    traceId: r.hex(32),
    spanId: r.hex(16),
    traceFlags: r.pick([TraceFlags.SAMPLED, TraceFlags.SAMPLED | 0x02]),
    isRemote,
    ...(r.next() < 0.5 ? { traceState: new TraceState(`vendor=${r.hex(6)},other=x`) } : {}),
  };
}

/** Spans of every shape the SDK makes: all kinds, remote and local parents, events, links, statuses, several scopes and resources. */
function randomSpans(seed: number, count: number): ReadableSpan[] {
  const r = randomSource(seed);
  const providers = [
    collectingProvider({ 'service.name': 'a', 'process.pid': 42, 'process.command_args': ['node', 'app.js'] }),
    collectingProvider({ 'service.name': 'b', 'host.name': 'ħost' }, 'https://opentelemetry.io/schemas/1.30.0'),
  ];
  const tracers = providers.flatMap(({ provider }) => [
    provider.getTracer('plain'),
    provider.getTracer('@opentelemetry/instrumentation-http', '0.300.0'),
    provider.getTracer('scoped', '1.0.0', { schemaUrl: 'https://example.com/schema' }),
  ]);
  const spans = providers.map((p) => p.ended);
  for (let i = 0; i < count; i++) {
    let parent: Context = ROOT_CONTEXT;
    const parentKind = r.int(3);
    if (parentKind === 1) parent = trace.setSpanContext(ROOT_CONTEXT, spanContextOf(r, true));
    if (parentKind === 2) parent = trace.setSpanContext(ROOT_CONTEXT, spanContextOf(r, false));
    const links: Link[] = Array.from({ length: r.int(3) }, () => ({
      context: spanContextOf(r, r.next() < 0.5),
      ...(r.next() < 0.5 ? { attributes: attributesOf(r, 3) } : {}),
    }));
    const span = r.pick(tracers).startSpan(
      r.pick(STRINGS.slice(0, 9)),
      {
        kind: r.pick([SpanKind.INTERNAL, SpanKind.SERVER, SpanKind.CLIENT, SpanKind.PRODUCER, SpanKind.CONSUMER]),
        attributes: attributesOf(r, 20),
        links,
        startTime: hrTime(r),
      },
      parent,
    );
    for (let e = r.int(3); e > 0; e--) span.addEvent(r.pick(STRINGS.slice(0, 8)), attributesOf(r, 3), hrTime(r));
    const status = r.int(4);
    if (status === 1) span.setStatus({ code: SpanStatusCode.OK });
    if (status === 2) span.setStatus({ code: SpanStatusCode.ERROR, message: r.pick(STRINGS) });
    if (status === 3) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end(hrTime(r));
  }
  // Interleaved across resources and scopes, as a batch of a busy process is.
  const all = spans.flat();
  return all.map((_, i) => all[(i * 7) % all.length]!).filter((s, i, a) => a.indexOf(s) === i);
}

/** Asserts that our bytes for `spans` are the SDK serializer's, naming the first byte that differs (a diff of 100 KB is unreadable). */
function assertSdkBytes(spans: ReadableSpan[], what = '') {
  const ours = encodeTraceRequest(spans);
  const sdk = ProtobufTraceSerializer.serializeRequest(spans)!;
  let at = 0;
  while (at < ours.length && at < sdk.length && ours[at] === sdk[at]) at++;
  const same = at === ours.length && at === sdk.length;
  assert.ok(same, `${what} first difference at byte ${at} of ${ours.length} (SDK: ${sdk.length})`);
}

it('writes the SDK serializer’s bytes for spans of every shape, across resources and scopes', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    const spans = randomSpans(seed, 60);
    assertSdkBytes(spans, `seed ${seed}:`);
  }
});

it('writes the SDK serializer’s bytes for an empty batch and for one span', () => {
  assertSdkBytes([]);
  const one = randomSpans(9, 1).slice(0, 1);
  assertSdkBytes(one);
});

it('writes the SDK serializer’s bytes for attribute values only other signals use (bytes, maps)', () => {
  const [span] = randomSpans(10, 1);
  assert.ok(span);
  // The span SDK only keeps primitives and arrays; the serializer also takes these (logs' AnyValue).
  Object.assign(span.attributes, { bytes: new Uint8Array([0, 1, 255]), map: { nested: { deeper: [1, 'two', true] }, n: 3 } });
  assertSdkBytes([span]);
});

it('a view of a span as it leaves (span-view.ts) writes the bytes of the span, but for what it replaces', () => {
  // Spans past the SDK's limits, so that their dropped counts are not 0 (which reads as absent).
  const { provider, ended } = collectingProvider({ 'service.name': 'limited' }, undefined, { attributeCountLimit: 2, eventCountLimit: 1, linkCountLimit: 1 });
  const link = { context: { traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), traceFlags: TraceFlags.SAMPLED } };
  for (let i = 0; i < 5; i++) {
    const span = provider.getTracer('limited').startSpan('over', { attributes: { a: 1, b: 2, c: 3 }, links: [link, link] });
    span.addEvent('first').addEvent('second');
    span.end();
  }
  assert.ok(ended.every((span) => span.droppedAttributesCount && span.droppedEventsCount && span.droppedLinksCount));
  const spans = [...randomSpans(15, 60), ...ended];
  const views = spans.map((span) => spanWith(span, {}));
  assert.deepEqual(encodeTraceRequest(views), encodeTraceRequest(spans));
  assertSdkBytes(views);
  // What the local recorder reads besides what OTLP carries.
  for (const [i, view] of views.entries()) assert.deepEqual([view.duration, view.ended], [spans[i]!.duration, spans[i]!.ended]);
  const replaced = spans.map((span) => spanWith(span, { attributes: { 'db.statement': 'SELECT ?' }, events: [] }));
  assertSdkBytes(replaced);
  for (const span of decodeTraceRequestProto(encodeTraceRequest(replaced))) {
    assert.deepEqual(span.attributes, { 'db.statement': 'SELECT ?' });
    assert.equal(span.events.length, 0);
  }
});
it('spans encoded apart, at different times, make the request their batch would make, grouped by resource and scope', () => {
  const spans = randomSpans(14, 300);
  // As the span batcher encodes them: the spans of each turn of the event loop on their own.
  const encoded: EncodedSpan[] = [];
  for (let from = 0; from < spans.length; from += 7) encoded.push(...encodeSpans(spans.slice(from, from + 7)));
  assert.deepEqual(traceRequestOf(encoded), encodeTraceRequest(spans));
  assertSdkBytes(spans);
  // Each span's bytes are its own: a batch of some of them is the request of those spans.
  const some = [3, 1, 250, 42];
  assert.deepEqual(traceRequestOf(some.map((i) => encoded[i]!)), ProtobufTraceSerializer.serializeRequest(some.map((i) => spans[i]!)));
});

it('spans that lie one after the other in a chunk are copied together, whatever order and subset a batch takes of them', () => {
  const spans = randomSpans(16, 120);
  const encoded = encodeSpans(spans);
  const orders: number[][] = [
    spans.map((_, i) => i),
    spans.map((_, i) => spans.length - 1 - i),
    spans.map((_, i) => i).filter((i) => i % 3 !== 1),
    [5, 6, 7, 9, 8, 10, 10, 11],
  ];
  for (const order of orders) {
    assert.deepEqual(
      traceRequestOf(order.map((i) => encoded[i]!)),
      ProtobufTraceSerializer.serializeRequest(order.map((i) => spans[i]!)),
      `order ${order.slice(0, 6).join(',')}…`,
    );
  }
});

it('the warm-up encodes a made-up span without changing the next batch’s bytes', () => {
  const { provider, ended } = collectingProvider({ 'service.name': 'small' });
  const tracer = provider.getTracer('small');
  for (let i = 0; i < 20; i++) tracer.startSpan(`GET /${i}`).end();
  encodeTraceRequest(ended); // sets the size guess the next two start from
  const before = encodeTraceRequest(ended);
  prepareTraceEncoder();
  const after = encodeTraceRequest(ended);
  assert.deepEqual(after, before);
});

it('grows its buffer when the batch is far bigger than the last one', () => {
  encodeTraceRequest(randomSpans(11, 2));
  const big = randomSpans(12, 400);
  assertSdkBytes(big);
});

it('a span bigger than the room left keeps its own bytes alone alive: the spans before and after it share ordinary chunks', () => {
  const { provider, ended } = collectingProvider({ 'service.name': 'small' });
  const tracer = provider.getTracer('small');
  for (let i = 0; i < 50; i++) tracer.startSpan(`GET /${i}`, { attributes: { 'http.route': '/items/:id' } }).end();
  const [huge] = randomSpans(13, 1);
  assert.ok(huge);
  Object.assign(huge.attributes, { huge: 'h'.repeat(1_000_000) });
  const spans = [...ended.slice(0, 25), huge, ...ended.slice(25)];
  const encoded = encodeSpans(spans);
  assert.deepEqual(traceRequestOf(encoded), ProtobufTraceSerializer.serializeRequest(spans));
  const bufferOf = (span: EncodedSpan) => span.chunk.buffer.byteLength;
  assert.equal(bufferOf(encoded[25]!), encoded[25]!.length, 'exactly its bytes, not the grown chunk');
  assert.ok(encoded[25]!.length >= 1_000_000);
  for (const span of [...encoded.slice(0, 25), ...encoded.slice(26)]) assert.ok(bufferOf(span) <= 64 * 1024, `${bufferOf(span)} bytes kept by a small span`);
  assert.notEqual(encoded[26]!.chunk.buffer, encoded[25]!.chunk.buffer);
});

it('decodes (independently of the SDK) to the spans that were made', () => {
  const { provider, ended } = collectingProvider({ 'service.name': 'checkout' });
  const tracer = provider.getTracer('@opentelemetry/instrumentation-http', '0.300.0');
  const remote = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: '00f067aa0ba902b7',
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
  });
  const span = tracer.startSpan(
    'GET /users/:id',
    { kind: SpanKind.SERVER, attributes: { 'http.status_code': 200, 'pyroscope.profile.id': 'x', long: 'y'.repeat(300), big: -(2 ** 40) } },
    remote,
  );
  span.setStatus({ code: SpanStatusCode.ERROR, message: 'ünicode' });
  span.end();
  const [made] = ended;
  assert.ok(made);
  const [decoded] = decodeTraceRequestProto(encodeTraceRequest(ended));
  assert.ok(decoded);
  assert.equal(decoded.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
  assert.equal(decoded.spanId, made.spanContext().spanId);
  assert.equal(decoded.parentSpanId, '00f067aa0ba902b7');
  assert.equal(decoded.name, 'GET /users/:id');
  assert.equal(decoded.kind, OtlpSpanKind.Server);
  // SpanFlags: sampled, and the parent's remoteness known (0x100) and true (0x200).
  assert.equal(decoded.flags, 0x301);
  assert.deepEqual(decoded.attributes, { 'http.status_code': 200, 'pyroscope.profile.id': 'x', long: 'y'.repeat(300), big: -(2 ** 40) });
  assert.deepEqual(decoded.status, { code: 2, message: 'ünicode' });
  assert.equal(decoded.resource['service.name'], 'checkout');
  assert.equal(decoded.scope.name, '@opentelemetry/instrumentation-http');
  const nanos = (t: [number, number]) => BigInt(t[0]) * 1_000_000_000n + BigInt(t[1]);
  assert.equal(decoded.startTimeUnixNano, nanos(made.startTime));
  assert.equal(decoded.endTimeUnixNano, nanos(made.endTime));
});
