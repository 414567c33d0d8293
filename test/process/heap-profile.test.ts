/**
 * The in-use memory profile (`heap` in --profiles): an app keeps ~64 MB from one function and
 * churns as much garbage from another. Every window's memory profile reaches /ingest, filed by the
 * receiver (Pyroscope's rules) as `memory`, and most of the in-use space is under the function
 * that keeps it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, runCli } from '../support/child.js';
import { linkedEnv } from '../support/linking.js';
import { startReceiver } from '../support/receiver.js';
import type { IngestRecord } from '../support/receiver-types.js';

const RETAINER = 'retain_in_use';

/** The share of a memory profile's in-use bytes in stacks through `frame`. */
function inUseShare(ingest: IngestRecord, frame: string): { share: number; bytes: number } {
  let total = 0;
  let through = 0;
  for (const sample of ingest.samples) {
    const bytes = sample.values.inuse_space ?? 0;
    total += bytes;
    if (sample.stack.includes(frame)) through += bytes;
  }
  return { share: total === 0 ? 0 : through / total, bytes: total };
}

test('with heap on, every window sends a memory profile, and the in-use space is under the function that keeps it', async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const app = runCli(['--profiles', 'cpu,wall,heap', fixture('apps/memory.cjs')], { env: { OTEL_SERVICE_NAME: 'memory-app', ...linkedEnv(receiver) } });
  t.after(() => app.process.kill('SIGKILL'));
  const exit = await app.exit();
  assert.equal(exit.code, 0, app.stderr);

  const memory = receiver.ingests.filter((ingest) => ingest.metricName === 'memory');
  const wall = receiver.ingests.filter((ingest) => ingest.metricName === 'wall');
  assert.ok(wall.length >= 3, `windows sent: ${wall.length}`);
  assert.deepEqual(memory.map((ingest) => ingest.from).sort(), wall.map((ingest) => ingest.from).sort(), 'one memory profile per window, the last one too');
  for (const ingest of memory) {
    assert.deepEqual(ingest.profileTypeIds.sort(), ['memory:inuse_objects:count:inuse_space:bytes', 'memory:inuse_space:bytes:inuse_space:bytes']);
    assert.equal(ingest.seriesLabels.service_name, 'memory-app');
    assert.ok(ingest.samples.every((sample) => sample.labels.span_id === undefined), 'memory samples carry no span (V8 records no context with them)');
  }
  const last = memory.sort((a, b) => a.from - b.from).at(-1)!;
  const { share, bytes } = inUseShare(last, RETAINER);
  t.diagnostic(`last window: ${(bytes / 1e6).toFixed(1)} MB in use, ${(share * 100).toFixed(1)}% under ${RETAINER}`);
  assert.ok(bytes > 40e6, `in-use bytes ${bytes}`);
  assert.ok(share >= 0.5, `share under ${RETAINER}: ${share}`);
  assert.ok(!last.samples.some((sample) => sample.stack.includes('churn_garbage') && (sample.values.inuse_space ?? 0) > bytes / 4), 'the churned garbage is not what is in use');
});
