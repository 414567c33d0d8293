/**
 * Credentials reach the backends as the official SDKs send them, and never reach a log line,
 * even when the backends fail and we have something to warn about.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, runCli } from '../support/child.js';
import { load } from '../support/load.js';
import { basicAuthOf, startReceiver } from '../support/receiver.js';

const TOKEN = 'tok-SECRET-0123456789';
const PASSWORD = 'pw-SECRET-9876543210';
const OTLP_TOKEN = 'otlp-SECRET-5555';

async function runWith(flags: string[], check: (receiver: Awaited<ReturnType<typeof startReceiver>>, stderr: string) => void): Promise<void> {
  const receiver = await startReceiver();
  try {
    // One failure each, so warnings are written; a retry then delivers.
    receiver.setBehaviour('ingest', { status: 503, times: 1 });
    receiver.setBehaviour('traces', { status: 500, times: 1 });
    const app = runCli(
      [
        ...flags,
        '--server',
        receiver.url,
        '--otlp-endpoint',
        receiver.url,
        '--otlp-headers',
        `authorization=Bearer%20${OTLP_TOKEN}`,
        '--flush-interval',
        '1000',
        '--log-level',
        'debug',
        '--',
        fixture('apps/server.cjs'),
      ],
      { env: { OTEL_BSP_SCHEDULE_DELAY: '200' } },
    );
    const port = (await app.line(/listening (\d+)/))[1];
    await load(`http://127.0.0.1:${port}`, (i) => `/work/${i}`, 20, 4);
    await receiver.waitFor(() => receiver.ingests.length > 0 && receiver.spans.length > 0, { timeoutMs: 20_000 });
    app.process.kill('SIGTERM');
    await app.exit();
    assert.match(app.stderr, /upload failed/, 'the injected failures were reported');
    for (const secret of [TOKEN, PASSWORD, OTLP_TOKEN, Buffer.from(`admin:${PASSWORD}`).toString('base64')]) {
      assert.ok(!app.stderr.includes(secret) && !app.stdout.includes(secret), `a secret leaked into the output:\n${app.stderr}`);
    }
    for (const trace of receiver.traceExports) assert.equal(trace.headers.authorization, `Bearer ${OTLP_TOKEN}`);
    check(receiver, app.stderr);
  } finally {
    await receiver.close();
  }
}

test('bearer token and tenant reach /ingest; OTLP headers reach the collector; no secret is printed', () =>
  runWith(['--auth-token', TOKEN, '--tenant-id', 'acme'], (receiver) => {
    for (const ingest of receiver.ingests) {
      assert.equal(ingest.headers.authorization, `Bearer ${TOKEN}`);
      assert.equal(ingest.headers['x-scope-orgid'], 'acme');
    }
  }));

test('basic auth reaches /ingest as user:password; no secret is printed', () =>
  runWith(['--basic-auth-user', 'admin', '--basic-auth-password', PASSWORD, '--pyroscope-headers', 'x-team=payments'], (receiver) => {
    for (const ingest of receiver.ingests) {
      assert.deepEqual(basicAuthOf(ingest.headers), { username: 'admin', password: PASSWORD });
      assert.equal(ingest.headers['x-team'], 'payments');
      assert.equal(ingest.headers['x-scope-orgid'], undefined);
    }
  }));
