/**
 * Shutdown while the backend misbehaves: a second Ctrl-C during a hung flush ends the process at
 * once (dying of SIGINT, long before the deadline), while a repeat within 500 ms — the terminal
 * and the pyro-run CLI both delivering the same keypress — does not cut the flush short; and a
 * backend that fails once just as the final flush starts is retried within the deadline, while
 * one that is not there at all (refused, a name that does not resolve) is given up on at once.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { test } from 'node:test';
import { fixture, registerPath, runNode } from '../support/child.js';
import { startReceiver } from '../support/receiver.js';
import { startApp, steadyLoad, workSpans } from './support/app.js';

const DEADLINE_MS = 10_000;
/** Nothing is sent before the end: every upload is the final flush's. */
const ONLY_AT_EXIT = {
  PYRO_RUN_UPLOAD_TIMEOUT_MS: '5000',
  PYROSCOPE_FLUSH_INTERVAL_MS: '600000',
  OTEL_BSP_SCHEDULE_DELAY: '600000',
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '100000',
  OTEL_BSP_MAX_QUEUE_SIZE: '100000',
  PYRO_RUN_SHUTDOWN_TIMEOUT_MS: String(DEADLINE_MS),
};
/** src/agent/shutdown.ts: a repeat sooner than this is the same keypress. */
const DUPLICATE_MS = 500;

test('a second SIGINT during a hung final flush ends the process at once, dying of SIGINT', async (t) => {
  const receiver = await startReceiver();
  try {
    receiver.setBehaviour('ingest', { hang: true });
    receiver.setBehaviour('traces', { hang: true });
    const app = await startApp({ env: { PYROSCOPE_SERVER_ADDRESS: receiver.url, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...ONLY_AT_EXIT } });
    await steadyLoad(app.base, { durationMs: 1000 });
    assert.equal(receiver.requests.length, 0, 'nothing sent before the end');

    const first = Date.now();
    app.child.process.kill('SIGINT');
    // The flush is under way: its first upload reached the backend and hangs there.
    await receiver.waitFor(() => receiver.requests.some((r) => r.outcome === 'hung'), { timeoutMs: 5000, description: 'the final flush started' });
    // Not a synchronisation sleep: the second signal must come later than the duplicate window.
    const wait = DUPLICATE_MS + 100 - (Date.now() - first);
    if (wait > 0) await delay(wait);
    const second = Date.now();
    app.child.process.kill('SIGINT');
    const exit = await app.child.exit(DEADLINE_MS + 5000);
    const afterSecond = Date.now() - second;
    const total = Date.now() - first;
    t.diagnostic(
      `second SIGINT ${second - first} ms after the first; dead ${afterSecond} ms after it, ${total} ms after the first (deadline ${DEADLINE_MS} ms)`,
    );
    assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: null, signal: 'SIGINT' }, app.child.stderr);
    assert.ok(afterSecond < 1500, `ended ${afterSecond} ms after the second SIGINT`);
    assert.ok(total < DEADLINE_MS / 2, `ended ${total} ms after the first SIGINT, with a ${DEADLINE_MS} ms deadline`);
  } finally {
    await receiver.close();
  }
});

test('a repeat within 500 ms (terminal + CLI relay) does not cut the flush short: everything arrives', async () => {
  const receiver = await startReceiver();
  try {
    receiver.setBehaviour('ingest', { delayMs: 1500 });
    receiver.setBehaviour('traces', { delayMs: 1500 });
    const app = await startApp({ env: { PYROSCOPE_SERVER_ADDRESS: receiver.url, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...ONLY_AT_EXIT } });
    const load = await steadyLoad(app.base, { durationMs: 1000 });
    const first = Date.now();
    app.child.process.kill('SIGINT');
    await delay(50);
    app.child.process.kill('SIGINT');
    const exit = await app.child.exit(DEADLINE_MS + 5000);
    assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: null, signal: 'SIGINT' }, app.child.stderr);
    assert.ok(
      Date.now() - first >= 1500,
      `it waited for the slow backend: ${Date.now() - first} ms, ${receiver.spans.length} spans, ${receiver.requests.map((r) => r.outcome).join(' ')}\n${app.child.stderr}`,
    );
    const spans = workSpans(receiver.spans);
    assert.deepEqual(
      load.seqs.filter((seq) => !spans.has(seq)),
      [],
      'every span was flushed',
    );
    assert.ok(receiver.ingests.length > 0, 'the last window was flushed');
    assert.doesNotMatch(app.child.stderr, /pyro-run: warning/);
  } finally {
    await receiver.close();
  }
});

test('a backend blip during the final flush is retried within the deadline: nothing is lost', async (t) => {
  const receiver = await startReceiver();
  try {
    const app = await startApp({ env: { PYROSCOPE_SERVER_ADDRESS: receiver.url, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...ONLY_AT_EXIT } });
    const load = await steadyLoad(app.base, { durationMs: 1000 });
    // The first upload of each pipeline fails: 503, then a reset.
    receiver.setBehaviour('ingest', { status: 503, times: 1 });
    receiver.setBehaviour('traces', { reset: true, times: 1 });
    const started = Date.now();
    app.child.process.kill('SIGTERM');
    const exit = await app.child.exit(DEADLINE_MS + 5000);
    assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: null, signal: 'SIGTERM' }, app.child.stderr);
    t.diagnostic(`SIGTERM → exit ${Date.now() - started} ms, with one failure per pipeline retried`);
    assert.ok(Date.now() - started < 3000, `a quick retry, not the deadline: ${Date.now() - started} ms`);
    const spans = workSpans(receiver.spans);
    assert.deepEqual(
      load.seqs.filter((seq) => !spans.has(seq)),
      [],
      'every span arrived',
    );
    assert.ok(
      receiver.ingests.some((i) => i.metricName === 'wall'),
      'the last window arrived',
    );
    assert.doesNotMatch(app.child.stderr, /not delivered/);
  } finally {
    await receiver.close();
  }
});

/** A loopback port nothing listens on: bound, then closed. */
async function refusedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

for (const [what, url, error] of [
  ['refuses connections', async () => `http://127.0.0.1:${await refusedPort()}`, /connect ECONNREFUSED/],
  ['does not resolve', async () => 'http://pyro-run-test.invalid:4040', /getaddrinfo (ENOTFOUND|EAI_AGAIN) pyro-run-test\.invalid/],
] as const) {
  test(`a backend that ${what} at exit is no server: a short script exits at once, saying once that its last data was not delivered`, async (t) => {
    const backend = await url();
    const started = Date.now();
    const app = runNode(['--import', registerPath, fixture('apps/hello-span.cjs')], {
      env: { PYROSCOPE_SERVER_ADDRESS: backend, OTEL_EXPORTER_OTLP_ENDPOINT: backend, PYRO_RUN_SHUTDOWN_TIMEOUT_MS: '60000' },
    });
    // Well inside the deadline: waiting it out would take 60 s.
    const exit = await app.exit(DEADLINE_MS);
    t.diagnostic(`exit after ${Date.now() - started} ms with a 60 s shutdown deadline`);
    assert.deepEqual({ code: exit.code, signal: exit.signal, stdout: app.stdout }, { code: 0, signal: null, stdout: 'hi\n' });
    const lines = app.stderr.split('\n').filter((line) => line !== '');
    assert.equal(lines.length, 1, app.stderr);
    assert.match(
      lines[0]!,
      /^pyro-run: warning: final flush: 3 of 3 uploads to \S+\/v1\/traces, \S+\/ingest not delivered: no server there \(/,
      'a span batch and a cpu and a wall profile',
    );
    assert.match(lines[0]!, error);
  });
}
