/**
 * Span batches leave the app's code before they are worked on: a full batch is handed over in a
 * turn of its own, encoded a slice of the event loop at a time, and a batch still encoding at exit
 * is encoded there and then, once.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type ReadableSpan, type SpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { readConfig } from '../../src/config/index.js';
import { OtlpTracesUpstream } from '../../src/export/otlp/otlp-traces-upstream.js';
import type { Outgoing } from '../../src/export/transport/outgoing.js';
import { Logger } from '../../src/log.js';
import { SpanBatcher } from '../../src/tracing/span-batcher.js';
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

it('a batch is encoded over several turns and sent as one request with every span', async () => {
  const sent: Outgoing[] = [];
  const upstream = new OtlpTracesUpstream(traces, (request) => void sent.push(request), log);
  const batch = endedSpans(3000);
  upstream.spans(batch);
  assert.equal(sent.length, 0, 'not encoded in one go');
  await upstream.settle();
  assert.equal(sent.length, 1);
  assert.deepEqual(
    decodeTraceRequestProto(sent[0]!.body).map((span) => span.name),
    batch.map((span) => span.name),
  );
});

it('at exit, a batch still encoding is encoded synchronously, once, before the last buffered spans', async () => {
  const sent: Outgoing[] = [];
  const upstream = new OtlpTracesUpstream(traces, (request) => void sent.push(request), log);
  const encoding = endedSpans(3000);
  const buffered = endedSpans(2);
  upstream.spans(encoding);
  const owed = upstream.owedSync({ window: undefined, spanBatches: [buffered], logBatches: [], metrics: undefined });
  assert.deepEqual(
    owed.map((request) => decodeTraceRequestProto(request.body).length),
    [3000, 2],
  );
  await upstream.settle();
  await nextTurn();
  assert.equal(sent.length, 0, 'the async encoding, overtaken by the exit, sends nothing');
});
