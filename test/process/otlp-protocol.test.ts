/** Spans reach the collector in each OTLP/HTTP encoding, linked the same way. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, runCli } from '../support/child.js';
import { assertLinked } from '../support/linking.js';
import { load } from '../support/load.js';
import { startReceiver } from '../support/receiver.js';

const variants = [
  { protocol: 'http/protobuf', encoding: 'protobuf', env: {} },
  { protocol: 'http/json', encoding: 'json', env: {} },
  // Metrics asked for: the full NodeSDK path instead of the lean trace SDK; spans must link the same.
  { protocol: 'http/protobuf', encoding: 'protobuf', env: { OTEL_METRICS_EXPORTER: 'console', OTEL_METRIC_EXPORT_INTERVAL: '600000' } },
] as const;

for (const { protocol, encoding, env } of variants) {
  test(`traces over OTLP ${protocol}${'OTEL_METRICS_EXPORTER' in env ? ', with metrics (full NodeSDK)' : ''}`, async () => {
    const receiver = await startReceiver();
    try {
      const app = runCli(['--service-name', 'proto-check', '--server', receiver.url, '--otlp-traces-endpoint', receiver.tracesUrl, '--otlp-protocol', protocol, '--', fixture('apps/server.mjs')], { env });
      const port = (await app.line(/listening (\d+)/))[1];
      await load(`http://127.0.0.1:${port}`, (i) => `/work/${i}`, 12, 4);
      app.process.kill('SIGTERM');
      assert.equal((await app.exit()).signal, 'SIGTERM');
      assert.ok(receiver.traceExports.length > 0);
      for (const exported of receiver.traceExports) assert.equal(exported.encoding, encoding);
      assertLinked(receiver, 'proto-check');
    } finally {
      await receiver.close();
    }
  });
}

test('an always_off sampler: no spans exported and no sample labelled', async () => {
  const receiver = await startReceiver();
  try {
    const app = runCli(['--server', receiver.url, '--otlp-endpoint', receiver.url, '--', fixture('apps/server.mjs')], { env: { OTEL_TRACES_SAMPLER: 'always_off' } });
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
