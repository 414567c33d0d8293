/**
 * Grafana joins a span to its profiles on the service name: profiles must be filed under exactly
 * the span's `service.name`, also when that is a scoped npm name Pyroscope does not take as an app
 * name (issue 16). Against Pyroscope 1.13+ the name travels as the `service_name` label; an older
 * server refuses that label, and then the profiles still arrive, under the sanitized name, with
 * one warning saying so.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, runCli } from '../support/child.js';
import { assertAttributed, cpuIngests, linkedEnv } from '../support/linking.js';
import { load } from '../support/load.js';
import type { ServiceNameLabelRule } from '../support/ingest-endpoint.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

const SCOPED = '@acme/checkout';

/** Serves 60 requests, then SIGTERM: the app dies of it, having flushed. */
async function runScopedApp(rule: ServiceNameLabelRule): Promise<{ receiver: Receiver; stderr: string; close: () => Promise<void> }> {
  const receiver = await startReceiver({ serviceNameLabel: rule });
  const app = runCli([fixture('scoped-app/server.cjs')], { env: linkedEnv(receiver) });
  try {
    const port = (await app.line(/listening (\d+)/))[1];
    await load(`http://127.0.0.1:${port}`, (i) => `/work/${i}`, 60, 4);
    app.process.kill('SIGTERM');
    assert.equal((await app.exit()).signal, 'SIGTERM', app.stderr);
  } catch (error) {
    app.process.kill('SIGKILL');
    await receiver.close();
    throw error;
  }
  return { receiver, stderr: app.stderr, close: () => receiver.close() };
}

test('profiles of an app named @acme/checkout are filed under @acme/checkout, the service.name its spans carry', async (t) => {
  const { receiver, stderr, close } = await runScopedApp('replaces-app-name');
  t.after(close);
  assert.deepEqual([...new Set(receiver.spans.map((span) => span.resource['service.name']))], [SCOPED]);
  assert.ok(receiver.ingests.length > 0);
  assert.deepEqual([...new Set(receiver.ingests.map((ingest) => ingest.seriesLabels.service_name))], [SCOPED]);
  assert.deepEqual(
    receiver.requests.filter((r) => r.endpoint === 'ingest' && r.status !== 200).map((r) => `${r.status} ${r.error}`),
    [],
  );
  assert.doesNotMatch(stderr, /warning/i);
  assertAttributed(t, receiver);
});

test('a Pyroscope before 1.13 refuses the service_name label: every window still arrives, under _acme/checkout, with one warning', async (t) => {
  const { receiver, stderr, close } = await runScopedApp('duplicates-app-name');
  t.after(close);
  const refused = receiver.requests.filter((r) => r.endpoint === 'ingest' && r.status === 400);
  assert.equal(refused.length, 1, 'only the first upload is sent in the form the server refuses');
  assert.match(refused[0]!.error ?? '', /duplicate label name: 'service_name'/);
  assert.deepEqual([...new Set(receiver.ingests.map((ingest) => ingest.serviceName))], ['_acme/checkout']);
  assert.equal(cpuIngests(receiver).length, receiver.ingests.length / 2, 'a wall profile for each cpu profile: none dropped');
  const warnings = stderr.split('\n').filter((line) => /warning/.test(line));
  assert.equal(warnings.length, 1, stderr);
  assert.match(warnings[0]!, /refuses the service_name label \(servers before 1\.13 do\), so profiles of "@acme\/checkout" are filed as "_acme\/checkout"/);
  assertAttributed(t, receiver);
});
