/**
 * Every way an app ends flushes the last profile window and the pending spans, within the
 * shutdown deadline, and ends exactly as it would have without us (code or signal).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Child, cliPath, fixture, registerPath, runNode } from '../support/child.js';
import { cpuIngests, serverSpans } from '../support/linking.js';
import { load } from '../support/load.js';
import { type Receiver, startReceiver } from '../support/receiver.js';

const REQUESTS = 20;

function startApp(receiver: Receiver, app = 'apps/server.cjs', extra: Record<string, string> = {}, through: 'preload' | 'cli' = 'preload'): Child {
  const args = through === 'cli' ? [cliPath, fixture(app)] : ['--import', registerPath, fixture(app)];
  return runNode(args, {
    env: {
      OTEL_SERVICE_NAME: 'shutdown-app',
      PYROSCOPE_SERVER_ADDRESS: receiver.url,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      // Longer than the test: the only window is the one flushed at exit, and spans wait in the batch.
      PYROSCOPE_FLUSH_INTERVAL_MS: '600000',
      OTEL_BSP_SCHEDULE_DELAY: '600000',
      PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS: '2000',
      ...extra,
    },
  });
}

async function serve(app: Child): Promise<string> {
  const base = `http://127.0.0.1:${(await app.line(/listening (\d+)/))[1]}`;
  await load(base, (i) => `/work/${i}?ms=5`, REQUESTS, 4);
  return base;
}

/**
 * What was promised arrived: every request's span, and the final window's CPU samples of the hot
 * functions. A span may arrive twice: the first batch goes out early (at 32 spans, util/batcher.ts),
 * and when it is still in flight at the exit the final flush sends it again — at-least-once
 * (docs/reliability.md).
 */
function assertFlushed(receiver: Receiver): void {
  const spans = serverSpans(receiver).filter((s) => s.name === 'GET /work/:seq');
  assert.equal(new Set(spans.map((s) => s.spanId)).size, REQUESTS, 'every request’s span');
  assert.ok(spans.length <= 2 * REQUESTS, `${spans.length} spans: none more than twice`);
  const hot = cpuIngests(receiver)
    .flatMap((i) => i.samples)
    .filter((s) => s.stack.some((f) => f.startsWith('hot_')) && s.labels.span_id);
  assert.ok(hot.length > 0, 'the final CPU window did not arrive');
}

const endings: {
  name: string;
  end: (app: Child, base: string) => Promise<void> | void;
  expect: { code: number | null; signal: NodeJS.Signals | null };
  app?: string;
}[] = [
  {
    name: 'process.exit(7) from the app',
    end: (_, base) => void fetch(`${base}/exit/7`, { method: 'POST' }).then((r) => r.arrayBuffer()),
    expect: { code: 7, signal: null },
  },
  { name: 'SIGTERM with no handler of the app', end: (app) => void app.process.kill('SIGTERM'), expect: { code: null, signal: 'SIGTERM' } },
  { name: 'SIGINT with no handler of the app', end: (app) => void app.process.kill('SIGINT'), expect: { code: null, signal: 'SIGINT' } },
  {
    name: 'an uncaught exception',
    end: (_, base) => void fetch(`${base}/crash`, { method: 'POST' }).then((r) => r.arrayBuffer()),
    expect: { code: 1, signal: null },
  },
  {
    name: 'event loop runs dry',
    end: (_, base) => void fetch(`${base}/close`, { method: 'POST' }).then((r) => r.arrayBuffer()),
    expect: { code: 0, signal: null },
  },
  {
    name: "SIGTERM handled by the app's own handler",
    app: 'apps/server-own-sigterm.cjs',
    end: (app) => void app.process.kill('SIGTERM'),
    expect: { code: 0, signal: null },
  },
];

for (const ending of endings) {
  test(`flushes on ${ending.name}, with a slow receiver`, async () => {
    const receiver = await startReceiver();
    try {
      receiver.setBehaviour('ingest', { delayMs: 300 });
      receiver.setBehaviour('traces', { delayMs: 300 });
      const app = startApp(receiver, ending.app);
      const base = await serve(app);
      await ending.end(app, base);
      const exit = await app.exit();
      assert.deepEqual({ code: exit.code, signal: exit.signal }, ending.expect, app.stderr);
      if (ending.app) assert.match(app.stdout, /SIGTERM handler ran/);
      assertFlushed(receiver);
      assert.doesNotMatch(app.stderr, /pyro-run:/, 'nothing to warn about');
    } finally {
      await receiver.close();
    }
  });
}

const DEADLINE_MS = 1500;
/** Worker start-up, process teardown and a loaded CI machine, on top of the deadline. */
const SLACK_MS = 2500;

for (const ending of endings.filter((e) => !e.app)) {
  test(`never hangs on ${ending.name} when the backend never answers`, async () => {
    const receiver = await startReceiver();
    try {
      receiver.setBehaviour('ingest', { hang: true });
      receiver.setBehaviour('traces', { hang: true });
      const app = startApp(receiver, ending.app, { PYRO_RUN_SHUTDOWN_TIMEOUT_MS: String(DEADLINE_MS) });
      const base = await serve(app);
      const started = Date.now();
      await ending.end(app, base);
      const exit = await app.exit(DEADLINE_MS + 10_000);
      const took = Date.now() - started;
      assert.deepEqual({ code: exit.code, signal: exit.signal }, ending.expect, app.stderr);
      assert.ok(took < DEADLINE_MS + SLACK_MS, `took ${took} ms with a ${DEADLINE_MS} ms deadline`);
      assert.match(app.stderr, /not delivered within the 1500 ms shutdown deadline/);
      assert.equal(
        app.stderr
          .trim()
          .split('\n')
          .filter((l) => l.includes('not delivered')).length,
        1,
        app.stderr,
      );
    } finally {
      await receiver.close();
    }
  });
}

/** NestJS's shutdown hooks: the app's handler cleans up, removes itself and raises SIGTERM again. */
const RERAISE_WITHIN_MS = 3000;

for (const through of ['preload', 'cli'] as const) {
  test(`an app that raises SIGTERM again once it cleaned up dies of it within ${RERAISE_WITHIN_MS / 1000} s (${through}), its last window flushed`, async () => {
    const receiver = await startReceiver();
    try {
      const app = startApp(receiver, 'apps/server-reraise-sigterm.cjs', {}, through);
      await serve(app);
      const started = Date.now();
      app.process.kill('SIGTERM');
      const exit = await app.exit();
      const took = Date.now() - started;
      assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: null, signal: 'SIGTERM' }, app.stderr);
      assert.ok(took < RERAISE_WITHIN_MS, `took ${took} ms`);
      assert.match(app.stdout, /SIGTERM handler ran/);
      assertFlushed(receiver);
    } finally {
      await receiver.close();
    }
  });
}
