/**
 * The uploads' warm-up (uploads.ts): what uploads need is loaded inside the app's first
 * `listen()` (agent/first-listen.ts) — before a server can be connected to, not in the app's first
 * turns of the event loop, where an app that listens in its main module already serves — a process
 * that never listens starts without it and loads it for its first upload, and a warm-up that fails
 * is left for the first upload.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Uploads } from '../../src/export/uploads.js';
import type { HttpSender } from '../../src/export/transport/http-sender.js';
import { loadUndici } from '../../src/export/transport/undici-parts.js';
import { VENDOR_UNDICI_FILE } from '../../src/vendor.js';
import type { Upstream } from '../../src/export/upstream.js';
import { Logger } from '../../src/log.js';
import { registerPath, runNode } from '../support/child.js';
import { startReceiver } from '../support/receiver.js';

/** Whether the agent's HTTP client (the bundle of undici's parts, src/vendor.ts) is loaded, read from the app's own code. */
const LOADED = `const loaded = () => Object.keys(require.cache).some((file) => file.replace(/\\\\/g, '/').endsWith('dist/vendor/${VENDOR_UNDICI_FILE}'));`;

/** Prints, from the app's first line, whether the agent's HTTP client is loaded already. */
const APP = `
  ${LOADED}
  console.log(loaded() ? 'loaded before the app' : 'not loaded');
`;

/** A server: whether the client is loaded before its listen(), right after it returns, and when it is listening. */
const SERVER = `
  ${LOADED}
  const before = loaded();
  const server = require('node:http').createServer((req, res) => res.end());
  server.listen(0, '127.0.0.1', () => {
    console.log(JSON.stringify({ before, afterListenReturned, listening: loaded() }));
    server.close();
  });
  const afterListenReturned = loaded();
`;

it('a process that never listens starts without the HTTP client, and still sends its last window when it ends', async () => {
  const receiver = await startReceiver();
  try {
    const app = runNode(['--import', registerPath, '-e', `${APP}; const end = Date.now() + 100; while (Date.now() < end);`], {
      env: { PYROSCOPE_SERVER_ADDRESS: receiver.url, OTEL_TRACES_EXPORTER: 'none' },
    });
    const exit = await app.exited;
    assert.deepEqual(exit, { code: 0, signal: null }, app.stderr);
    assert.equal(app.stdout.trim(), 'not loaded');
    assert.ok(
      receiver.ingests.some((ingest) => ingest.metricName === 'process_cpu'),
      'the last window reached the receiver',
    );
  } finally {
    await receiver.close();
  }
});

it('a server has the HTTP client loaded by its first listen(), before it can be connected to', async () => {
  const app = runNode(['--import', registerPath, '-e', SERVER], { env: { PYROSCOPE_SERVER_ADDRESS: 'http://127.0.0.1:9', OTEL_TRACES_EXPORTER: 'none' } });
  const exit = await app.exited;
  assert.deepEqual(exit, { code: 0, signal: null }, app.stderr);
  assert.deepEqual(JSON.parse(app.stdout.trim()), { before: false, afterListenReturned: true, listening: true });
});

it('without a destination that uploads, nothing of the HTTP client is loaded', async () => {
  const app = runNode(['--import', registerPath, '-e', APP], { env: { OTEL_TRACES_EXPORTER: 'none', PYRO_RUN_PROFILES: 'none' } });
  const exit = await app.exited;
  assert.deepEqual(exit, { code: 0, signal: null }, app.stderr);
  assert.equal(app.stdout.trim(), 'not loaded');
});

it('a warm-up that fails is left for the first upload: nothing is thrown', () => {
  const prepared: string[] = [];
  const sender = {
    prepare: () => {
      throw new Error('undici is not installed');
    },
  } as unknown as HttpSender;
  const upstream = { prepare: () => void prepared.push('upstream'), settle: () => Promise.resolve() } as unknown as Upstream;
  const log = new Logger(
    'warn',
    (text) => text,
    () => undefined,
  );
  const uploads = new Uploads(sender, [upstream], log, { shutdownTimeoutMs: 1000, proxy: undefined });
  assert.doesNotThrow(() => uploads.prepare());
  assert.deepEqual(prepared, [], 'the warm-up stops at its first failure');
});

it('the HTTP client’s parts are loaded once', () => {
  const parts = loadUndici();
  assert.equal(typeof parts.Agent, 'function');
  assert.equal(loadUndici(), parts);
});
