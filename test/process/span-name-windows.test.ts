/**
 * A request's samples carry one span_name in every window (issue 16): the route's, as soon as any
 * span of the request knows it, not `GET` in the windows cut before the router ran. A window
 * waits, for at most one interval, for the spans still open at its cut. Requests here are cut by
 * windows (1 s) before their route is known: a middleware burns CPU, waits 0.7 s, then the router
 * matches `/slow/:id` and burns CPU again.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, runCli } from '../support/child.js';
import { cpuIngests, linkedEnv } from '../support/linking.js';
import { serveThenTerminate } from '../support/load.js';
import { startReceiver } from '../support/receiver.js';

const REQUESTS = 6;

test('samples taken before the route was known carry the route name too: one span_name per span across windows', async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const app = runCli([fixture('apps/slow-route.cjs')], { env: { OTEL_SERVICE_NAME: 'slow-route', ...linkedEnv(receiver) } });
  t.after(() => app.process.kill('SIGKILL'));
  await serveThenTerminate(app, (i) => `/slow/${i}`, REQUESTS, 2);

  const samples = cpuIngests(receiver).flatMap((ingest) => ingest.samples.map((sample) => ({ ...sample, window: ingest.from })));
  const before = samples.filter((sample) => sample.stack.includes('hot_before_route'));
  const inRoute = samples.filter((sample) => sample.stack.includes('hot_in_route'));
  assert.ok(before.length > 0 && inRoute.length > 0, `both phases profiled: ${before.length}, ${inRoute.length}`);
  const names = new Map<string, Set<string>>();
  const windows = new Map<string, Set<number>>();
  for (const sample of [...before, ...inRoute]) {
    const spanId = sample.labels.span_id;
    assert.ok(spanId, 'every sample of a request carries its span');
    if (!names.has(spanId)) names.set(spanId, new Set());
    names.get(spanId)!.add(sample.labels.span_name ?? '');
    if (!windows.has(spanId)) windows.set(spanId, new Set());
    windows.get(spanId)!.add(sample.window);
  }
  assert.equal(names.size, REQUESTS);
  assert.ok(
    [...windows.values()].some((seen) => seen.size > 1),
    'some request was cut by a window',
  );
  for (const [spanId, seen] of names) assert.deepEqual([...seen], ['GET /slow/:id'], `span ${spanId}`);
});
