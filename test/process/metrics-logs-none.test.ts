/**
 * `OTEL_METRICS_EXPORTER=none` / `OTEL_LOGS_EXPORTER=none`, as copied from OTel docs, ask for no
 * metrics and no logs: nothing is loaded for those signals (issue 16: they cost 1.1 s of start-up
 * by loading the whole NodeSDK). `bench/run.mjs startup` has the row that measures it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, runCli } from '../support/child.js';

async function loadedSdks(env: Record<string, string>): Promise<string[]> {
  const app = runCli([fixture('apps/loaded-otel-sdks.cjs')], { env: { OTEL_TRACES_EXPORTER: 'none', ...env } });
  const [, json] = await app.line(/^loaded (.*)$/m);
  assert.equal((await app.exit()).code, 0, app.stderr);
  return JSON.parse(json!) as string[];
}

test('OTEL_METRICS_EXPORTER=none and OTEL_LOGS_EXPORTER=none load no metrics, logs or NodeSDK package', async () => {
  const none = await loadedSdks({ OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none' });
  assert.deepEqual(none.filter((name) => /sdk-(node|metrics|logs)$/.test(name)), [], `loaded: ${none.join(', ')}`);
  assert.deepEqual(none, await loadedSdks({}), 'the same as with neither set');
});

test('an exporter asked for loads the NodeSDK for that signal', async () => {
  const console = await loadedSdks({ OTEL_METRICS_EXPORTER: 'console', OTEL_LOGS_EXPORTER: 'none' });
  assert.ok(console.includes('@opentelemetry/sdk-node') && console.includes('@opentelemetry/sdk-metrics'), `loaded: ${console.join(', ')}`);
});
