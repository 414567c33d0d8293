/**
 * Log records through pyro-run's own pipeline (OTLP/HTTP logs): the SDK's logger emits into the
 * batcher, batches are encoded by the OTLP exporters' own serializers into requests for our sender,
 * and what is still buffered or compressing at exit is encoded there and then, once.
 */
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { LoggerProvider, type ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { readConfig } from '../../src/config/index.js';
import { ownLogsExport } from '../../src/export/remote-upstreams.js';
import { OtlpLogsUpstream } from '../../src/export/otlp/otlp-logs-upstream.js';
import type { Outgoing } from '../../src/export/transport/outgoing.js';
import { Logger } from '../../src/log.js';
import { LogBatcher } from '../../src/tracing/log-batcher.js';
import { decodeLogsRequestProto } from '../support/otlp-logs-decode.js';

const BATCH = { maxQueueSize: 6, maxExportBatchSize: 4, scheduledDelayMillis: 60_000, firstFullBatch: 4 };
const log = new Logger(
  'warn',
  (text) => text,
  () => {},
);

/** `count` records emitted through a real LoggerProvider into `batcher`. */
function emit(batcher: LogBatcher, count: number, from = 0): void {
  const logger = new LoggerProvider({ processors: [batcher] }).getLogger('test');
  for (let i = from; i < from + count; i++) logger.emit({ body: `line ${i}`, severityText: 'info', severityNumber: 9, attributes: { i } });
}

function batcherInto(batches: ReadableLogRecord[][], dropped: number[] = []): LogBatcher {
  return new LogBatcher({
    ...BATCH,
    onBatch: (records) => void batches.push(records),
    onDrop: () => void dropped.push(1),
    onError: (error) => assert.fail(String(error)),
  });
}

it('a full batch is handed over in a later turn, not inside the logger call that filled it, and the rest waits; past the queue, records are dropped and counted', async () => {
  const batches: ReadableLogRecord[][] = [];
  const dropped: number[] = [];
  const batcher = batcherInto(batches, dropped);
  emit(batcher, 8);
  assert.equal(batches.length, 0, 'nothing handed over while the app’s code runs');
  assert.deepEqual(dropped, [1, 1], 'the queue holds 6');
  await nextTurn();
  assert.deepEqual(
    batches.map((batch) => batch.map((record) => record.body)),
    [['line 0', 'line 1', 'line 2', 'line 3']],
  );
  assert.deepEqual(
    batcher.takeBuffered().map((batch) => batch.map((record) => record.body)),
    [['line 4', 'line 5']],
    'the rest waits for the next batch or the delay',
  );
});

it('what is buffered is taken at exit in batches, and not handed over again', async () => {
  const batches: ReadableLogRecord[][] = [];
  const batcher = batcherInto(batches);
  emit(batcher, 3);
  assert.deepEqual(
    batcher.takeBuffered().map((batch) => batch.length),
    [3],
  );
  await batcher.forceFlush();
  assert.deepEqual(batches, []);
});

/** The logs export of `env` (remote mode: an OTLP endpoint is set). */
function logsOf(env: Record<string, string>) {
  const logs = ownLogsExport(readConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_LOGS_EXPORTER: 'otlp', ...env }).config);
  assert.ok(logs);
  return logs;
}

function records(count: number): ReadableLogRecord[] {
  const batches: ReadableLogRecord[][] = [];
  const batcher = batcherInto(batches);
  emit(batcher, count);
  return batcher.takeBuffered().flat();
}

it('http/protobuf: one request to the logs endpoint, with the headers asked for, that decodes to every record', () => {
  const sent: Outgoing[] = [];
  new OtlpLogsUpstream(logsOf({ OTEL_EXPORTER_OTLP_LOGS_HEADERS: 'x-scope-orgid=tenant-a' }), (request) => void sent.push(request), log).logRecords(records(3));
  assert.equal(sent.length, 1);
  const [request] = sent;
  assert.equal(request!.url, 'http://collector:4318/v1/logs');
  assert.equal(request!.kind, 'logs');
  assert.deepEqual(request!.headers, { 'x-scope-orgid': 'tenant-a', 'content-type': 'application/x-protobuf' });
  const decoded = decodeLogsRequestProto(request!.body);
  assert.deepEqual(
    decoded.map((record) => [record.body, record.severityText, record.attributes.i]),
    [
      ['line 0', 'info', 0],
      ['line 1', 'info', 1],
      ['line 2', 'info', 2],
    ],
  );
});

it('http/json: the OTLP/JSON encoding, as application/json', () => {
  const sent: Outgoing[] = [];
  new OtlpLogsUpstream(logsOf({ OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: 'http/json' }), (request) => void sent.push(request), log).logRecords(records(2));
  assert.equal(sent[0]!.headers['content-type'], 'application/json');
  const body = JSON.parse(Buffer.from(sent[0]!.body).toString('utf8')) as {
    resourceLogs: { scopeLogs: { logRecords: { body: { stringValue: string } }[] }[] }[];
  };
  assert.deepEqual(
    body.resourceLogs[0]!.scopeLogs[0]!.logRecords.map((record) => record.body.stringValue),
    ['line 0', 'line 1'],
  );
});

it('gzip: compressed off the app’s turn; a batch still compressing at exit is encoded there, once, with the records still buffered', async () => {
  const sent: Outgoing[] = [];
  const upstream = new OtlpLogsUpstream(logsOf({ OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip' }), (request) => void sent.push(request), log);
  upstream.logRecords(records(2));
  assert.deepEqual(sent, [], 'compressing in the threadpool');
  const owed = upstream.owedSync({ window: undefined, spanBatches: [], logBatches: [records(1)], metrics: undefined });
  assert.deepEqual(
    owed.map((request) => request.headers['content-encoding']),
    ['gzip', 'gzip'],
  );
  assert.deepEqual(
    owed.map((request) => decodeLogsRequestProto(gunzipSync(request.body)).length),
    [2, 1],
  );
  await upstream.settle();
  assert.deepEqual(sent, [], 'the batch taken at exit is not sent a second time');
});

it('logs are pyro-run’s to send over OTLP/HTTP in remote mode only: grpc and local mode stay the NodeSDK’s', () => {
  const own = (env: Record<string, string>) => ownLogsExport(readConfig({ OTEL_LOGS_EXPORTER: 'otlp', ...env }).config) !== undefined;
  assert.equal(own({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), true);
  assert.equal(own({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: 'grpc' }), false);
  assert.equal(own({}), false, 'nothing configured: local mode');
  assert.equal(own({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_LOGS_EXPORTER: 'console' }), false);
});
