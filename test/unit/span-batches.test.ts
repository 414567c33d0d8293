/**
 * Span batches leave the app's code before they are worked on: a full batch is handed over in a
 * turn of its own; where spans are sent as OTLP/protobuf, they wait for their batch as their bytes,
 * encoded in the turns after they end, a slice of the event loop at a time, and what is not encoded
 * yet at exit is encoded there and then, once.
 */
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type ReadableSpan, type SpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { readConfig } from '../../src/config/index.js';
import { OtlpTracesUpstream } from '../../src/export/otlp/otlp-traces-upstream.js';
import type { Outgoing } from '../../src/export/transport/outgoing.js';
import { Logger } from '../../src/log.js';
import { SPANS_PER_PIECE } from '../../src/tracing/encoded-span-queue.js';
import { SpanBatcher, type SpanBatcherOptions } from '../../src/tracing/span-batcher.js';
import { spanWith } from '../../src/tracing/span-view.js';
import { type EncodedSpan, encodeSpans, traceRequestOf } from '../../src/export/otlp/otlp-trace-encode.js';
import { decodeTraceRequestJson } from '../support/otlp-decode-json.js';
import { FIRST_FULL_BATCH } from '../../src/util/batcher.js';
import { decodeTraceRequestProto } from '../support/otlp-decode-proto.js';

function tracerInto(processor: SpanProcessor) {
  return new TracerProvider({ spanProcessors: [processor] }).getTracer('test');
}

function endedSpans(count: number): ReadableSpan[] {
  const ended: ReadableSpan[] = [];
  const tracer = tracerInto({
    onStart: () => {},
    onEnd: (span) => void ended.push(span),
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  });
  for (let i = 0; i < count; i++) tracer.startSpan(`span-${i}`, { attributes: { i } }).end();
  return ended;
}

const BATCH = { maxQueueSize: 100, maxExportBatchSize: 4, scheduledDelayMillis: 60_000, firstFullBatch: 4 };

it('a full batch is handed over in a later turn of the event loop, not inside the span.end() that filled it', async () => {
  const batches: string[][] = [];
  const batcher = new SpanBatcher({
    ...BATCH,
    onBatch: (spans) => void batches.push(spans.map((s) => s.name)),
    onDrop: () => assert.fail('dropped'),
    onError: (error) => assert.fail(String(error)),
  });
  const tracer = tracerInto(batcher);
  for (let i = 0; i < 4; i++) tracer.startSpan(`span-${i}`).end();
  assert.deepEqual(batches, [], 'nothing handed over while the app’s code runs');
  await nextTurn();
  assert.deepEqual(batches, [['span-0', 'span-1', 'span-2', 'span-3']]);
});

it('a full batch leaves alone, one a turn: spans that ended since wait for the next batch or the delay, as in the SDK', async () => {
  const batches: string[][] = [];
  const batcher = new SpanBatcher({
    ...BATCH,
    onBatch: (spans) => void batches.push(spans.map((s) => s.name)),
    onDrop: () => assert.fail('dropped'),
    onError: (error) => assert.fail(String(error)),
  });
  const tracer = tracerInto(batcher);
  for (let i = 0; i < 9; i++) tracer.startSpan(`span-${i}`).end();
  await nextTurn();
  assert.deepEqual(batches, [['span-0', 'span-1', 'span-2', 'span-3']]);
  await nextTurn();
  assert.deepEqual(batches.at(-1), ['span-4', 'span-5', 'span-6', 'span-7']);
  await nextTurn();
  assert.equal(batches.length, 2, 'one span short of a batch is not sent on its own');
  assert.deepEqual(
    batcher.takeBuffered().map((batch) => batch.map((s) => s.name)),
    [['span-8']],
  );
});

it('the first batches are full sooner: at FIRST_FULL_BATCH spans, then twice as many each time, up to maxExportBatchSize', async () => {
  const sizes: number[] = [];
  const batcher = new SpanBatcher({
    maxQueueSize: 4096,
    maxExportBatchSize: FIRST_FULL_BATCH * 5,
    scheduledDelayMillis: 60_000,
    firstFullBatch: FIRST_FULL_BATCH,
    onBatch: (spans) => void sizes.push(spans.length),
    onDrop: () => assert.fail('dropped'),
    onError: (error) => assert.fail(String(error)),
  });
  const tracer = tracerInto(batcher);
  const endSpans = async (count: number) => {
    for (let i = 0; i < count; i++) tracer.startSpan('span').end();
    await nextTurn();
  };
  await endSpans(FIRST_FULL_BATCH - 1);
  assert.deepEqual(sizes, [], 'one short of the first full batch waits for the delay');
  await endSpans(1);
  await endSpans(FIRST_FULL_BATCH * 2 - 1);
  assert.deepEqual(sizes, [FIRST_FULL_BATCH], 'the second batch is full at twice the first');
  await endSpans(1);
  await endSpans(FIRST_FULL_BATCH * 4);
  await endSpans(FIRST_FULL_BATCH * 5);
  await endSpans(FIRST_FULL_BATCH * 5);
  assert.deepEqual(
    sizes,
    [1, 2, 4, 5, 5].map((n) => n * FIRST_FULL_BATCH),
    'doubling, then maxExportBatchSize from there on',
  );
});

it('a batch the destination throws on is reported, never thrown into the app', async () => {
  const errors: unknown[] = [];
  const batcher = new SpanBatcher({
    ...BATCH,
    onBatch: () => {
      throw new Error('encoder broke');
    },
    onDrop: () => {},
    onError: (error) => void errors.push(error),
  });
  const tracer = tracerInto(batcher);
  for (let i = 0; i < 4; i++) tracer.startSpan(`span-${i}`).end();
  await nextTurn();
  assert.deepEqual(
    errors.map((e) => (e as Error).message),
    ['encoder broke'],
  );
  assert.doesNotThrow(() => batcher.flush());
});

const traces = readConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).config.traces;
const log = new Logger(
  'warn',
  (text) => text,
  () => {},
);

/** A batcher in the mode a destination sending OTLP/protobuf asks for: spans batched as their bytes. */
function encodingBatcher(options: Partial<SpanBatcherOptions> & { encode?: (spans: readonly ReadableSpan[]) => EncodedSpan[] } = {}) {
  const batches: EncodedSpan[][] = [];
  const encodeCalls: number[] = [];
  const { encode = encodeSpans, ...rest } = options;
  const batcher = new SpanBatcher({
    ...BATCH,
    onBatch: () => assert.fail('span objects handed over'),
    onDrop: () => assert.fail('dropped'),
    onError: (error) => assert.fail(String(error)),
    ...rest,
    encoded: {
      encode: (spans) => {
        encodeCalls.push(spans.length);
        return encode(spans);
      },
      onBatch: (batch) => void batches.push(batch),
    },
  });
  return { batcher, batches, encodeCalls, tracer: tracerInto(batcher) };
}

const namesIn = (batch: EncodedSpan[]) => decodeTraceRequestProto(traceRequestOf(batch)).map((span) => span.name);

it('as bytes: spans are encoded right after the code that ended them, not inside span.end(), in pieces, and leave in full batches', async () => {
  const { batches, encodeCalls, tracer } = encodingBatcher({ maxQueueSize: 1000 });
  const count = SPANS_PER_PIECE * 4 + 2;
  for (let i = 0; i < count; i++) tracer.startSpan(`span-${i}`).end();
  assert.deepEqual(encodeCalls, [], 'nothing encoded while the app’s code runs');
  await nextTurn();
  assert.ok(encodeCalls.length > 0, 'encoding starts in the next turn');
  // How many pieces a turn takes depends on the clock (a slice of SLICE_MS); all of them in turns after it.
  while (encodeCalls.reduce((sum, n) => sum + n, 0) < count) await nextTurn();
  assert.ok(
    encodeCalls.every((n) => n <= SPANS_PER_PIECE),
    `pieces of ${encodeCalls}`,
  );
  await nextTurn();
  assert.deepEqual(batches.map(namesIn)[0], ['span-0', 'span-1', 'span-2', 'span-3']);
});

it('as bytes: a single ended span is encoded in the next turn too, and its batch waits for more', async () => {
  const { batcher, batches, encodeCalls, tracer } = encodingBatcher({ maxExportBatchSize: 100, firstFullBatch: 100 });
  tracer.startSpan('alone').end();
  assert.deepEqual(encodeCalls, []);
  await nextTurn();
  assert.deepEqual(encodeCalls, [1]);
  assert.deepEqual(batches, [], 'no batch is full yet');
  assert.deepEqual(batcher.takeEncoded().map(namesIn), [['alone']]);
});

it('as bytes: more spans than a slice of the event loop encodes are encoded over several turns, in order', async () => {
  const slow = (spans: readonly ReadableSpan[]) => {
    // An encoder at ~1 ms a piece: a slice (SLICE_MS) holds two or three pieces.
    const until = performance.now() + 1;
    while (performance.now() < until);
    return encodeSpans(spans);
  };
  const { batcher, encodeCalls, tracer } = encodingBatcher({ encode: slow, maxQueueSize: 1000, maxExportBatchSize: 1000, firstFullBatch: 1000 });
  const count = SPANS_PER_PIECE * 10;
  for (let i = 0; i < count; i++) tracer.startSpan(`span-${i}`).end();
  await nextTurn();
  const firstTurn = encodeCalls.length;
  assert.ok(firstTurn >= 1 && firstTurn <= 4, `${firstTurn} pieces in the first turn`);
  while (encodeCalls.reduce((sum, n) => sum + n, 0) < count) await nextTurn();
  assert.ok(encodeCalls.every((n) => n <= SPANS_PER_PIECE));
  const [batch] = batcher.takeEncoded();
  assert.deepEqual(
    namesIn(batch!),
    Array.from({ length: count }, (_, i) => `span-${i}`),
  );
});

it('as bytes: at exit, spans not yet encoded are encoded there and then, after those already waiting as bytes', async () => {
  const { batcher, tracer } = encodingBatcher({ maxExportBatchSize: 100, firstFullBatch: 100 });
  for (let i = 0; i < 3; i++) tracer.startSpan(`span-${i}`).end();
  await nextTurn();
  for (let i = 3; i < 5; i++) tracer.startSpan(`span-${i}`).end();
  const owed = batcher.takeEncoded();
  assert.deepEqual(owed.map(namesIn), [['span-0', 'span-1', 'span-2', 'span-3', 'span-4']]);
  assert.deepEqual(batcher.takeBuffered(), [], 'no span objects held');
  await nextTurn();
  assert.deepEqual(batcher.takeEncoded(), [], 'encoded once');
});

it('as bytes: the queue bound (OTEL_BSP_MAX_QUEUE_SIZE) counts the spans not yet encoded', async () => {
  const dropped: string[] = [];
  const { batcher, tracer } = encodingBatcher({
    maxQueueSize: 5,
    maxExportBatchSize: 100,
    firstFullBatch: 100,
    onDrop: (span) => void dropped.push(span.name),
  });
  for (let i = 0; i < 4; i++) tracer.startSpan(`span-${i}`).end();
  await nextTurn();
  for (let i = 4; i < 8; i++) tracer.startSpan(`span-${i}`).end();
  assert.deepEqual(dropped, ['span-5', 'span-6', 'span-7']);
  assert.deepEqual(batcher.takeEncoded().map(namesIn), [['span-0', 'span-1', 'span-2', 'span-3', 'span-4']]);
});

it('as bytes: each span leaves as its outgoing view makes it, and a span the encoder throws on is reported and left out, never thrown into the app', async () => {
  const errors: unknown[] = [];
  const { batcher, tracer } = encodingBatcher({
    maxExportBatchSize: 100,
    firstFullBatch: 100,
    outgoing: (span) => spanWith(span, { attributes: { 'db.statement': 'SELECT ?' } }),
    encode: (spans) => {
      if (spans.some((span) => span.name === 'broken')) throw new Error('encoder broke');
      return encodeSpans(spans);
    },
    onError: (error) => void errors.push(error),
  });
  tracer.startSpan('query', { attributes: { 'db.statement': 'SELECT 1' } }).end();
  tracer.startSpan('broken').end();
  const after = SPANS_PER_PIECE * 2;
  for (let i = 0; i < after; i++) tracer.startSpan(`after-${i}`).end();
  await nextTurn();
  assert.deepEqual(
    errors.map((e) => (e as Error).message),
    ['encoder broke'],
  );
  const [batch] = batcher.takeEncoded();
  assert.deepEqual(
    decodeTraceRequestProto(traceRequestOf(batch!)).map((span) => [span.name, span.attributes]),
    [['query', { 'db.statement': 'SELECT ?' }], ...Array.from({ length: after }, (_, i) => [`after-${i}`, { 'db.statement': 'SELECT ?' }])],
    'only the span the encoder throws on is left out',
  );
});

it('a batch of encoded spans is sent as one request with every span, in order', () => {
  const sent: Outgoing[] = [];
  const upstream = new OtlpTracesUpstream(traces, (request) => void sent.push(request), log);
  assert.equal(upstream.takesEncodedSpans, true);
  const batch = endedSpans(3000);
  upstream.encodedSpans(encodeSpans(batch));
  assert.equal(sent.length, 1);
  assert.deepEqual(
    decodeTraceRequestProto(sent[0]!.body).map((span) => span.name),
    batch.map((span) => span.name),
  );
});

it('gzipped: at exit, requests still compressing are compressed synchronously, once, before the last batches', async () => {
  const gzipTraces = readConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip' }).config.traces;
  const sent: Outgoing[] = [];
  const upstream = new OtlpTracesUpstream(gzipTraces, (request) => void sent.push(request), log);
  upstream.encodedSpans(encodeSpans(endedSpans(3000)));
  const owed = upstream.owedSync({ window: undefined, spanBatches: [], encodedSpanBatches: [encodeSpans(endedSpans(2))], logBatches: [], metrics: undefined });
  assert.deepEqual(
    owed.map((request) => [request.headers['content-encoding'], decodeTraceRequestProto(gunzipSync(request.body)).length]),
    [
      ['gzip', 3000],
      ['gzip', 2],
    ],
  );
  await upstream.settle();
  await nextTurn();
  assert.equal(sent.length, 0, 'the async compression, overtaken by the exit, sends nothing');
});

it('http/json: spans are taken as objects and sent as the SDK’s JSON', () => {
  const jsonTraces = readConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).config.traces;
  const sent: Outgoing[] = [];
  const upstream = new OtlpTracesUpstream(jsonTraces, (request) => void sent.push(request), log);
  assert.equal(upstream.takesEncodedSpans, false);
  const batch = endedSpans(3);
  upstream.spans(batch);
  assert.deepEqual(
    decodeTraceRequestJson(Buffer.from(sent[0]!.body).toString('utf8')).map((span) => span.name),
    batch.map((span) => span.name),
  );
});
