/**
 * What pyro-run labels profiles with stays within Pyroscope's limits, so no upload is rejected for
 * a label — with every other request's samples in that window (issue 16): a root span named with
 * 3000 characters among ordinary requests.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, runCli } from '../support/child.js';
import { assertAttributed, cpuIngests, linkedEnv } from '../support/linking.js';
import { load, serveThenTerminate } from '../support/load.js';
import { startReceiver } from '../support/receiver.js';

test("a span named with 3000 characters gets its name cut to Pyroscope's 2048 bytes, and no window is rejected", async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const app = runCli([fixture('apps/long-span-name.cjs')], { env: { OTEL_SERVICE_NAME: 'long-names', ...linkedEnv(receiver) } });
  t.after(() => app.process.kill('SIGKILL'));
  const port = (await app.line(/listening (\d+)/))[1];
  // The long span's requests run beside the others, so their windows hold both.
  const long = load(`http://127.0.0.1:${port}`, () => '/long', 20, 1);
  await serveThenTerminate(app, (i) => `/work/${i}`, 120, 8).catch(async (error: unknown) => {
    await long.catch(() => undefined);
    throw error;
  });
  await long;

  const ingests = receiver.requests.filter((request) => request.endpoint === 'ingest');
  assert.ok(ingests.length > 0);
  assert.deepEqual(ingests.filter((request) => request.status !== 200).map((request) => `${request.status} ${request.error}`), [], 'no upload rejected');
  const longSamples = cpuIngests(receiver).flatMap((ingest) => ingest.samples).filter((sample) => sample.stack.includes('hot_long'));
  assert.ok(longSamples.length > 0, "the long span's work was profiled");
  for (const sample of longSamples) {
    const name = sample.labels.span_name ?? '';
    assert.ok(name.startsWith('import xxx') && name.endsWith('…') && Buffer.byteLength(name) === 2048, `span_name cut to 2048 bytes: ${Buffer.byteLength(name)}`);
  }
  assertAttributed(t, receiver);
});
