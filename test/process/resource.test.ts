/**
 * The resource on the spans is what OpenTelemetry's own register would send for the same
 * detectors: a user who swaps `--require @opentelemetry/auto-instrumentations-node/register` for
 * pyro-run keeps every attribute their queries and dashboards read.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { type Child, fixture, runCli, runNode } from '../support/child.js';
import { type Attributes, OtlpSpanKind, startReceiver } from '../support/receiver.js';

const DETECTORS = 'env,host,os,process,serviceinstance';
/** Attributes whose values differ between two processes by nature. */
const PER_PROCESS = new Set(['service.instance.id', 'process.pid', 'process.command_args', 'process.executable.name', 'telemetry.sdk.version']);
const MACHINE_ID = '/etc/machine-id';

/** The resource of the first server span an app sends after one request. */
async function resourceOf(start: (env: Record<string, string>) => Child): Promise<Attributes> {
  const receiver = await startReceiver();
  try {
    const app = start({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'resource-check',
      OTEL_NODE_RESOURCE_DETECTORS: DETECTORS,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
      PYRO_RUN_PROFILES: 'none',
    });
    try {
      const port = (await app.line(/listening (\d+)/))[1];
      assert.equal((await fetch(`http://127.0.0.1:${port}/work/1`)).status, 200);
      const span = await receiver.waitFor(() => receiver.spans.find((s) => s.kind === OtlpSpanKind.Server));
      return span.resource;
    } finally {
      app.process.kill('SIGKILL');
      await app.exit();
    }
  } finally {
    await receiver.close();
  }
}

test("the spans' resource holds every attribute OpenTelemetry's own register detects, host.id included", async () => {
  const ours = await resourceOf((env) => runCli([fixture('apps/server.cjs')], { env }));
  const theirs = await resourceOf((env) => runNode(['--require', '@opentelemetry/auto-instrumentations-node/register', fixture('apps/server.cjs')], { env }));
  assert.deepEqual(Object.keys(ours).sort(), Object.keys(theirs).sort());
  for (const [key, value] of Object.entries(theirs)) if (!PER_PROCESS.has(key)) assert.deepEqual(ours[key], value, key);
  // The one attribute the host detector reads asynchronously, when the machine has one.
  if (existsSync(MACHINE_ID)) assert.equal(ours['host.id'], readFileSync(MACHINE_ID, 'utf8').trim());
});

test('an app that exits at once: its span goes without the late attributes, and no word about them', async () => {
  const receiver = await startReceiver();
  try {
    const app = runCli([fixture('apps/exit-at-once.cjs')], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'exits-at-once', PYRO_RUN_PROFILES: 'none' },
    });
    assert.equal((await app.exit()).code, 0);
    assert.equal(app.stderr, '');
    assert.deepEqual(
      receiver.spans.map((span) => [span.name, span.resource['service.name']]),
      [['quick', 'exits-at-once']],
    );
  } finally {
    await receiver.close();
  }
});
