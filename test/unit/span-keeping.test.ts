/**
 * Local mode's keeping rule (src/export/local/span-keeping.ts) and the endpoint totals it feeds: every
 * local root counted exactly, details kept per whole local trace by a rule that favours errors and
 * slow requests, never a child without its root.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { bucketOf, bucketUpperNs, percentileNs } from '../../src/util/duration-histogram.js';
import { MAX_ENDPOINTS, OTHER_ENDPOINT } from '../../src/export/local/endpoint-totals.js';
import { splitPoint } from '../../src/export/local/span-files.js';
import { SpanKeeper } from '../../src/export/local/span-keeping.js';

const SERVER = 1;
const INTERNAL = 0;
let nextId = 1;
const id = (width: number) => (nextId++).toString(16).padStart(width, '0');

interface FakeSpan {
  name?: string;
  kind?: number;
  traceId: string;
  spanId?: string;
  parent?: { spanId: string; isRemote?: boolean };
  durationNs?: number;
  error?: boolean;
}

function span({ name = 'GET /', kind = SERVER, traceId, spanId = id(16), parent, durationNs = 1e6, error = false }: FakeSpan): ReadableSpan {
  return {
    name,
    kind,
    spanContext: () => ({ traceId, spanId, traceFlags: 1 }),
    parentSpanContext: parent && { traceId, spanId: parent.spanId, traceFlags: 1, isRemote: parent.isRemote ?? false },
    duration: [Math.floor(durationNs / 1e9), durationNs % 1e9],
    startTime: [1_000_000, 0],
    endTime: [1_000_000 + Math.floor(durationNs / 1e9), durationNs % 1e9],
    status: { code: error ? 2 : 0 },
    attributes: { 'pyroscope.profile.id': spanId, 'http.route': '/', 'thread.id': 7 },
  } as unknown as ReadableSpan;
}

/** A request: its root and two children (one nested), children first as they end. */
function request(options: Omit<FakeSpan, 'traceId'> = {}): ReadableSpan[] {
  const traceId = id(32);
  const rootId = id(16);
  const middleware = span({ name: 'middleware', kind: INTERNAL, traceId, parent: { spanId: rootId } });
  const query = span({ name: 'query', kind: 2, traceId, parent: { spanId: middleware.spanContext().spanId } });
  return [query, middleware, span({ ...options, traceId, spanId: rootId })];
}

/** Span ids, sorted: the order within a trace is not part of the rule. */
const ids = (spans: readonly ReadableSpan[]) => spans.map((s) => s.spanContext().spanId).sort();

test('under light load every span is kept, children with their root, and every root counted', () => {
  const keeper = new SpanKeeper();
  const spans = [...request(), ...request({ name: 'POST /orders' })];
  assert.deepEqual(ids(keeper.take(spans, 1_000)), ids(spans));
  assert.equal(keeper.summarized, 0);
  assert.deepEqual(
    keeper.totals.list().map(({ name, kind, count }) => ({ name, kind, count })),
    [
      { name: 'GET /', kind: 2, count: 1 },
      { name: 'POST /orders', kind: 2, count: 1 },
    ],
  );
});

test('under load: per endpoint, `burst` traces at once and `perSecond` sustained for each reason, whole; the rest summarised, all counted', () => {
  const keeper = new SpanKeeper({ perSecond: 2, burst: 2 });
  const kept: ReadableSpan[] = [];
  let offered = 0;
  for (let i = 0; i < 100; i++) {
    const spans = request({ error: i % 10 === 0 });
    offered += spans.length;
    kept.push(...keeper.take(spans, 5_000 + i)); // all in one second
  }
  // 2 errors + 2 sampled: none is slow (no percentile before 20 roots, and all take as long).
  const roots = kept.filter((s) => s.parentSpanContext === undefined);
  assert.equal(roots.length, 4);
  assert.equal(roots.filter((s) => s.status.code === 2).length, 2, 'the errors first');
  assert.equal(kept.length, roots.length * 3, 'each kept root with its two children');
  assert.equal(keeper.summarized + kept.length, offered);
  const [total] = keeper.totals.list();
  assert.equal(total?.count, 100);
  assert.equal(total?.errors, 10);
  // Half a second later the allowance has refilled by one.
  assert.equal(keeper.take(request(), 5_600).length, 3);
  assert.equal(keeper.take(request(), 5_601).length, 0);
});

test("the slow are kept after the fair sample ran out: a root above its endpoint's 90th percentile", () => {
  const keeper = new SpanKeeper({ perSecond: 1, burst: 1 });
  // 100 fast requests in earlier seconds set the percentile.
  for (let i = 0; i < 100; i++) keeper.take(request({ durationNs: 1e6 }), i * 1000);
  const second = 1_000_000;
  // In one second: the sample slot goes to the first fast one; a slow one is still kept, a second fast one is not.
  assert.equal(keeper.take(request({ durationNs: 1e6 }), second).length, 3);
  assert.equal(keeper.take(request({ durationNs: 1e6 }), second + 1).length, 0);
  assert.equal(keeper.take(request({ durationNs: 50e6 }), second + 2).length, 3);
  assert.equal(keeper.take(request({ durationNs: 60e6 }), second + 3).length, 0, 'one slow per second at perSecond 1');
});

test("a child that ends after its root follows the root's decision; a trace's two local roots are decided apart", () => {
  const keeper = new SpanKeeper({ perSecond: 1, burst: 1 });
  const traceId = id(32);
  const kept = keeper.take([span({ traceId, spanId: 'a'.repeat(16) })], 1_000);
  assert.equal(kept.length, 1);
  const late = span({ name: 'late', kind: INTERNAL, traceId, parent: { spanId: 'a'.repeat(16) } });
  assert.deepEqual(ids(keeper.take([late], 1_001)), ids([late]));
  // An unkept root's late child is summarised, not written without its root.
  const other = request();
  keeper.take(other, 1_002);
  const otherTrace = (other[2] as ReadableSpan).spanContext().traceId;
  assert.deepEqual(
    keeper.take([span({ name: 'late', kind: INTERNAL, traceId: otherTrace, parent: { spanId: (other[2] as ReadableSpan).spanContext().spanId } })], 1_003),
    [],
  );

  // One trace, two local roots (the service called itself): each root takes only the spans under it.
  const shared = id(32);
  const outer = span({ name: 'GET /outer', traceId: shared, spanId: 'b'.repeat(16) });
  const client = span({ name: 'GET', kind: 2, traceId: shared, spanId: 'c'.repeat(16), parent: { spanId: 'b'.repeat(16) } });
  const inner = span({ name: 'GET /inner', traceId: shared, spanId: 'd'.repeat(16), parent: { spanId: 'c'.repeat(16), isRemote: true } });
  const innerChild = span({ name: 'work', kind: INTERNAL, traceId: shared, parent: { spanId: 'd'.repeat(16) } });
  const fresh = new SpanKeeper();
  assert.deepEqual(ids(fresh.take([innerChild, inner], 2_000)), ids([innerChild, inner]));
  assert.deepEqual(ids(fresh.take([client, outer], 2_001)), ids([client, outer]));
});

test("children waiting for their root are bounded: the oldest traces' are summarised; at exit the rest are written", () => {
  const keeper = new SpanKeeper({ maxPending: 4 });
  const waiting = [1, 2, 3].flatMap(() => request().slice(0, 2)); // 3 traces × 2 children, roots not ended
  assert.deepEqual(keeper.take(waiting, 1_000), []);
  assert.equal(keeper.summarized, 2, "the oldest trace's two children");
  assert.deepEqual(ids(keeper.drain()), ids(waiting.slice(2)));
  assert.deepEqual(keeper.drain(), []);
});

test('endpoint totals are exact: count, errors, total, max; p50/p95 within one bucket (≤ 4.4%) of the nearest rank', () => {
  const keeper = new SpanKeeper({ perSecond: 1, burst: 1, maxPending: 10, maxDecided: 10 });
  const durations = Array.from({ length: 1000 }, (_, i) => (i + 1) * 1_000_003);
  for (const [i, durationNs] of durations.entries()) keeper.take([span({ traceId: id(32), durationNs, error: i % 7 === 0 })], 1_000);
  const [total] = keeper.totals.list();
  assert.ok(total);
  assert.equal(total.count, 1000);
  assert.equal(total.errors, Math.ceil(1000 / 7));
  assert.equal(
    total.totalNs,
    durations.reduce((a, b) => a + b, 0),
  );
  assert.equal(total.maxNs, 1000 * 1_000_003);
  for (const p of [50, 95, 99]) {
    const exact = durations[Math.ceil((p / 100) * 1000) - 1] as number;
    const read = percentileNs(total.histogram, p, total.maxNs);
    assert.ok(read >= exact && read <= exact * 2 ** (1 / 16), `p${p}: ${read} for ${exact}`);
  }
  assert.equal(percentileNs(total.histogram, 100, total.maxNs), total.maxNs);
  assert.equal(percentileNs({}, 50, 0), 0);
  assert.ok(bucketUpperNs(bucketOf(12_345)) >= 12_345);
});

test('names that differ by an id are one endpoint, counted exactly', () => {
  const keeper = new SpanKeeper();
  for (let i = 0; i < MAX_ENDPOINTS + 10; i++) keeper.take([span({ name: `process order ${i}`, traceId: id(32) })], 1_000);
  assert.deepEqual(
    keeper.totals.list().map((t) => [t.name, t.count]),
    [['process order {id}', MAX_ENDPOINTS + 10]],
  );
});

test('names beyond the endpoint limit share one endpoint, so names the shaping cannot fold cannot grow the manifest', () => {
  const keeper = new SpanKeeper();
  // Letters only: no id to fold.
  const word = (i: number) => i.toString(26).replace(/./g, (digit) => String.fromCharCode(97 + parseInt(digit, 26)));
  for (let i = 0; i < MAX_ENDPOINTS + 10; i++) keeper.take([span({ name: `GET /users/${word(i)}`, traceId: id(32) })], 1_000);
  const list = keeper.totals.list();
  assert.equal(list.length, MAX_ENDPOINTS + 1);
  assert.equal(list.find((t) => t.name === OTHER_ENDPOINT)?.count, 10);
});

test('a batch of kept spans too big for the room left splits after the local root nearest its middle, else in the middle', () => {
  const [a, b] = [request(), request()];
  const batch = [...a, ...b]; // child, child, root, child, child, root
  assert.equal(splitPoint(batch), 3);
  const children = request().slice(0, 2);
  assert.equal(splitPoint([...children, ...children]), 2, 'no root: the middle');
  assert.equal(splitPoint(request().slice(2)), 0, 'one span: no split');
  assert.equal(splitPoint([...request(), ...request(), ...request()]), 3, 'the nearer of two roots around the middle, the earlier on a tie');
});

test('a summarised root that a profile window shows samples of is written after all, alone; the others that ended by then are forgotten', () => {
  const keeper = new SpanKeeper({ perSecond: 1, burst: 1 });
  const endAt = (ms: number) => (span: ReadableSpan) => Object.assign(span, { endTime: [Math.floor(ms / 1000), (ms % 1000) * 1e6] });
  const requests = Array.from({ length: 5 }, (_, i) => request().map(endAt(1_000_000 + i)));
  for (const spans of requests) keeper.take(spans, 1_000_000_000);
  assert.equal(keeper.summarized, 4 * 3, 'one kept, four summarised with their children');
  const rootOf = (spans: ReadableSpan[]) => spans[2] as ReadableSpan;
  const sampledIds = new Set([rootOf(requests[2]!).spanContext().spanId, rootOf(requests[4]!).spanContext().spanId]);
  // A window that ends before request 4 ended: only request 2 is due.
  const late = keeper.sampled((spanId) => sampledIds.has(spanId), 1_000_003);
  assert.deepEqual(ids(late), ids([rootOf(requests[2]!)]));
  const [root] = late;
  assert.equal(root?.name, 'GET /');
  assert.equal(root?.parentSpanContext, undefined);
  assert.deepEqual(root?.attributes, { 'pyroscope.profile.id': root?.spanContext().spanId, 'http.route': '/' }, 'what the report reads');
  assert.equal(root?.spanContext().traceId, rootOf(requests[2]!).spanContext().traceId);
  assert.equal(keeper.summarized, 4 * 3 - 1);
  // The next window: request 4 is due now; requests 1 and 3 were forgotten with the first.
  assert.deepEqual(ids(keeper.sampled((spanId) => sampledIds.has(spanId), 1_000_010)), ids([rootOf(requests[4]!)]));
  assert.deepEqual(
    keeper.sampled((spanId) => spanId === rootOf(requests[1]!).spanContext().spanId, Number.POSITIVE_INFINITY),
    [],
  );
});

test('the look-back is bounded: beyond it the oldest summarised roots are forgotten', () => {
  const keeper = new SpanKeeper({ perSecond: 1, burst: 1, maxLookBack: 3 });
  const roots = Array.from({ length: 10 }, () => span({ traceId: id(32) }));
  for (const root of roots) keeper.take([root], 1_000);
  const all = new Set(roots.map((root) => root.spanContext().spanId));
  assert.deepEqual(ids(keeper.sampled((spanId) => all.has(spanId), Number.POSITIVE_INFINITY)), ids(roots.slice(-3)));
});

test('a burst after a quiet spell is kept whole, up to `burst`; then `perSecond`', () => {
  const keeper = new SpanKeeper({ perSecond: 10, burst: 50 });
  let kept = 0;
  for (let i = 0; i < 80; i++) kept += keeper.take(request(), 1_000 + i).length / 3; // 80 requests in 80 ms
  assert.equal(kept, 50, 'the burst allowance (80 ms refill less than one more)');
  // Right after it, sustained: 100 requests a second for 10 s keep 10 a second.
  let sustained = 0;
  for (let i = 0; i < 1000; i++) sustained += keeper.take(request(), 1_080 + i * 10).length / 3;
  assert.ok(sustained >= 99 && sustained <= 101, `${sustained}`);
});

test('a local root the batch queue dropped still counts in its endpoint, and the spans of its trace are not kept', () => {
  const keeper = new SpanKeeper();
  const [query, middleware, root] = request();
  assert.deepEqual(keeper.take([query!, middleware!], 1_000), [], 'children wait for their root');
  keeper.dropped(root!);
  assert.deepEqual(
    keeper.totals.list().map((t) => [t.name, t.count]),
    [['GET /', 1]],
  );
  assert.equal(keeper.summarized, 2, 'the children that waited are summarised');
  const { traceId, spanId } = root!.spanContext();
  assert.deepEqual(keeper.take([span({ name: 'late', kind: INTERNAL, traceId, parent: { spanId } })], 1_000), [], 'a later child is not kept either');
  assert.equal(keeper.summarized, 3);
});
