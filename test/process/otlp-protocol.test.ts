/** Spans reach the collector in each OTLP encoding and over OTLP/gRPC, linked the same way. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, runCli } from '../support/child.js';
import { freePort } from '../support/local-server.js';
import { startGrpcCollector } from '../support/grpc-collector.js';
import { assertLinked, linkedEnv, serverSpans } from '../support/linking.js';
import { load } from '../support/load.js';
import { OtlpSpanKind, startReceiver } from '../support/receiver.js';

const variants = [
  { protocol: 'http/protobuf', encoding: 'protobuf', gzip: false, env: {} },
  { protocol: 'http/json', encoding: 'json', gzip: false, env: {} },
  // Metrics asked for: the full NodeSDK path instead of the lean trace SDK; spans must link the same.
  { protocol: 'http/protobuf', encoding: 'protobuf', gzip: false, env: { OTEL_METRICS_EXPORTER: 'console', OTEL_METRIC_EXPORT_INTERVAL: '600000' } },
  // Compression as OTel's docs set it: batches every 100 ms (gzipped in the threadpool) and the rest at exit (synchronously).
  { protocol: 'http/protobuf', encoding: 'protobuf', gzip: true, env: { OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip', OTEL_BSP_SCHEDULE_DELAY: '100' } },
  { protocol: 'http/json', encoding: 'json', gzip: true, env: { OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: 'gzip', OTEL_BSP_SCHEDULE_DELAY: '100' } },
] as const;

for (const { protocol, encoding, gzip, env } of variants) {
  const title = `traces over OTLP ${protocol}${'OTEL_METRICS_EXPORTER' in env ? ', with metrics (full NodeSDK)' : ''}${gzip ? ', gzipped' : ''}`;
  test(title, async () => {
    const receiver = await startReceiver();
    try {
      const app = runCli(
        [
          '--service-name',
          'proto-check',
          '--server',
          receiver.url,
          '--otlp-traces-endpoint',
          receiver.tracesUrl,
          '--otlp-protocol',
          protocol,
          '--',
          fixture('apps/server.mjs'),
        ],
        { env },
      );
      const port = (await app.line(/listening (\d+)/))[1];
      await load(`http://127.0.0.1:${port}`, (i) => `/work/${i}`, 12, 4);
      app.process.kill('SIGTERM');
      assert.equal((await app.exit()).signal, 'SIGTERM');
      assert.ok(receiver.traceExports.length > 0);
      for (const exported of receiver.traceExports) assert.deepEqual([exported.encoding, exported.contentEncoding], [encoding, gzip ? 'gzip' : '']);
      assertLinked(receiver, 'proto-check');
    } finally {
      await receiver.close();
    }
  });
}

test('an always_off sampler: no spans exported and no sample labelled', async () => {
  const receiver = await startReceiver();
  try {
    const app = runCli(['--server', receiver.url, '--otlp-endpoint', receiver.url, '--', fixture('apps/server.mjs')], {
      env: { OTEL_TRACES_SAMPLER: 'always_off' },
    });
    const port = (await app.line(/listening (\d+)/))[1];
    await load(`http://127.0.0.1:${port}`, (i) => `/work/${i}`, 12, 4);
    app.process.kill('SIGTERM');
    await app.exit();
    assert.equal(receiver.spans.length, 0);
    assert.ok(receiver.ingests.length > 0, 'profiles still arrive');
    for (const ingest of receiver.ingests) for (const sample of ingest.samples) assert.equal(sample.labels.span_id, undefined);
  } finally {
    await receiver.close();
  }
});

test("OTEL_EXPORTER_OTLP_TIMEOUT and a signal's own bound each OTLP upload: a collector that does not answer is given up on after them, and the next attempt delivers", async () => {
  const receiver = await startReceiver();
  try {
    receiver.setBehaviour('traces', { hang: true, times: 1 });
    receiver.setBehaviour('profiles', { hang: true, times: 1 });
    const env = { ...linkedEnv(receiver), PYRO_RUN_PROFILES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_TIMEOUT: '600', OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '400' };
    const app = runCli(['--service-name', 'timeouts', '--', fixture('apps/server.mjs')], { env });
    const port = (await app.line(/listening (\d+)/))[1];
    await load(`http://127.0.0.1:${port}`, (i) => `/work/${i}`, 12, 4);
    // Delivered while the app runs, by the sender's retry (not by the final flush): the hung attempts were given up on.
    const delivered = (endpoint: string) => receiver.requests.some((request) => request.endpoint === endpoint && request.status === 200);
    await receiver.waitFor(() => delivered('traces') && delivered('profiles') && serverSpans(receiver).length === 12, { timeoutMs: 8000 });
    app.process.kill('SIGTERM');
    assert.equal((await app.exit()).signal, 'SIGTERM');
    assert.match(app.stderr, /spans upload to http:\/\/127\.0\.0\.1:\d+\/v1\/traces failed: no complete answer within 400 ms/);
    assert.match(app.stderr, /profiles upload to http:\/\/127\.0\.0\.1:\d+\/v1development\/profiles failed: no complete answer within 600 ms/);
    assert.deepEqual(
      ['traces', 'profiles'].map((endpoint) => receiver.requests.filter((request) => request.endpoint === endpoint && request.outcome === 'hung').length),
      [1, 1],
    );
  } finally {
    await receiver.close();
  }
});

test('OTEL_TRACES_EXPORTER=otlp,console, as a list from the OTel docs: every span reaches the collector and is printed on stdout, each the same span', async () => {
  const receiver = await startReceiver();
  try {
    const app = runCli(['--service-name', 'both-ways', '--server', receiver.url, '--otlp-endpoint', receiver.url, '--', fixture('apps/server.mjs')], {
      env: { OTEL_TRACES_EXPORTER: 'otlp,console' },
    });
    const port = (await app.line(/listening (\d+)/))[1];
    await load(`http://127.0.0.1:${port}`, (i) => `/work/${i}`, 12, 4);
    app.process.kill('SIGTERM');
    assert.equal((await app.exit()).signal, 'SIGTERM');
    assert.doesNotMatch(app.stderr, /warning/);
    const spans = serverSpans(receiver);
    assert.equal(spans.length, 12);
    // ConsoleSpanExporter prints each span as an object literal: its `id` and `traceId` as hex strings.
    for (const span of spans) assert.match(app.stdout, new RegExp(`traceId: '${span.traceId}',[^}]*?id: '${span.spanId}'`));
    assertLinked(receiver, 'both-ways');
  } finally {
    await receiver.close();
  }
});

const grpcEndpoints = [
  { form: 'an http:// URL', env: (url: string) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: url }) },
  // As docker-compose files write a collector: host:port, plaintext chosen by OTEL_EXPORTER_OTLP_INSECURE.
  {
    form: 'host:port with OTEL_EXPORTER_OTLP_INSECURE=true',
    env: (url: string) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: new URL(url).host, OTEL_EXPORTER_OTLP_INSECURE: 'true' }),
  },
];

for (const { form, env: endpointEnv } of grpcEndpoints)
  test(`traces over OTLP/gRPC to a collector named by ${form}: the HTTP spans reach it linked, with OTEL_EXPORTER_OTLP_HEADERS as metadata`, async () => {
    const receiver = await startReceiver();
    const collector = await startGrpcCollector();
    try {
      const env = {
        ...linkedEnv(receiver),
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        ...endpointEnv(collector.url),
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20grpc-token,x-team=checkout',
      };
      const app = runCli(['--service-name', 'grpc-check', '--', fixture('apps/server.mjs')], { env });
      const port = (await app.line(/listening (\d+)/))[1];
      await load(`http://127.0.0.1:${port}`, (i) => `/work/${i}`, 12, 4);
      app.process.kill('SIGTERM');
      assert.equal((await app.exit()).signal, 'SIGTERM');
      assert.doesNotMatch(app.stderr, /warning/);
      assert.doesNotMatch(app.stderr, /grpc-token/);
      assert.equal(receiver.traceExports.length, 0, 'no span went over OTLP/HTTP');
      assert.equal(collector.spans().filter((span) => span.kind === OtlpSpanKind.Server).length, 12);
      for (const { metadata } of collector.exports) assert.deepEqual([metadata.authorization, metadata['x-team']], ['Bearer grpc-token', 'checkout']);
      assertLinked(receiver, 'grpc-check', collector.spans());
    } finally {
      await Promise.all([receiver.close(), collector.close()]);
    }
  });

test('an OTLP/gRPC collector that is not there: one warning naming it, and the app runs and ends as without the agent', async () => {
  const receiver = await startReceiver();
  try {
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    const env = { ...linkedEnv(receiver), OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint };
    const app = runCli(['--service-name', 'grpc-gone', '--', fixture('apps/server.mjs')], { env });
    const port = (await app.line(/listening (\d+)/))[1];
    await load(`http://127.0.0.1:${port}`, (i) => `/work/${i}`, 12, 4);
    app.process.kill('SIGTERM');
    assert.equal((await app.exit()).signal, 'SIGTERM');
    const warnings = app.stderr.split('\n').filter((line) => line.includes('warning'));
    assert.equal(warnings.length, 1, app.stderr);
    assert.ok(warnings[0]!.includes(`spans upload over OTLP/gRPC to ${endpoint} failed`), warnings[0]);
    assert.ok(receiver.ingests.length > 0, 'profiles still arrive');
  } finally {
    await receiver.close();
  }
});
