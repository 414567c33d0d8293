/**
 * `OTEL_METRICS_EXPORTER=none` / `OTEL_LOGS_EXPORTER=none`, as copied from OTel docs, ask for no
 * metrics and no logs: nothing is loaded for those signals (issue 16: they cost 1.1 s of start-up
 * by loading the whole NodeSDK). `bench/run.mjs startup` has the row that measures it. Asked for,
 * they are the NodeSDK's pipelines (those over OTLP/HTTP ending in our sender), whose failures are
 * told as warnings.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, runCli } from '../support/child.js';
import { startReceiver } from '../support/receiver.js';

async function loadedSdks(env: Record<string, string>): Promise<string[]> {
  const app = runCli([fixture('apps/loaded-otel-sdks.cjs')], { env: { OTEL_TRACES_EXPORTER: 'none', ...env } });
  const [, json] = await app.line(/^loaded (.*)$/m);
  assert.equal((await app.exit()).code, 0, app.stderr);
  return JSON.parse(json!) as string[];
}

test('OTEL_METRICS_EXPORTER=none and OTEL_LOGS_EXPORTER=none load no metrics, logs or NodeSDK package', async () => {
  const none = await loadedSdks({ OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none' });
  assert.deepEqual(
    none.filter((name) => /sdk-(node|metrics|logs)$/.test(name)),
    [],
    `loaded: ${none.join(', ')}`,
  );
  assert.deepEqual(none, await loadedSdks({}), 'the same as with neither set');
});

test('an exporter asked for loads the NodeSDK for that signal', async () => {
  const console = await loadedSdks({ OTEL_METRICS_EXPORTER: 'console', OTEL_LOGS_EXPORTER: 'none' });
  assert.ok(console.includes('@opentelemetry/sdk-node') && console.includes('@opentelemetry/sdk-metrics'), `loaded: ${console.join(', ')}`);
});

test('OTEL_METRICS_EXPORTER=otlp sent to a traces-only backend: the refused metrics are one warning, the spans go on', async () => {
  const receiver = await startReceiver();
  try {
    const env = { OTEL_METRICS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, PYRO_RUN_PROFILES: 'none', OTEL_BSP_SCHEDULE_DELAY: '100' };
    const app = runCli(['--service-name', 'metrics-refused', '--', fixture('apps/server.cjs')], { env });
    const port = (await app.line(/listening (\d+)/))[1];
    assert.equal((await fetch(`http://127.0.0.1:${port}/work/1`)).status, 200);
    await receiver.waitFor(() => receiver.spans.length > 0);
    app.process.kill('SIGTERM');
    assert.equal((await app.exit()).signal, 'SIGTERM');
    // The receiver has no /v1/metrics, as Tempo has none: the final collection is refused with 404.
    assert.ok(receiver.requests.some((request) => request.path === '/v1/metrics' && request.status === 404));
    const warnings = app.stderr.split('\n').filter((line) => line.includes('warning'));
    assert.equal(warnings.length, 1, app.stderr);
    assert.match(
      warnings[0]!,
      /^pyro-run: warning: metrics upload rejected \(http:\/\/127\.0\.0\.1:\d+\/v1\/metrics answered 404: 404 page not found\); dropping \d+ metrics \(\d+ KB\)$/,
    );
  } finally {
    await receiver.close();
  }
});
