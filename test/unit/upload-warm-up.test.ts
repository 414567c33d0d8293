/**
 * The uploads' warm-up (uploads.ts): what uploads need is loaded in the preload, before the app's
 * main module runs — not in the app's first turns of the event loop, where an app that listens in
 * its main module already serves — and a warm-up that fails is left for the first upload.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Uploads } from '../../src/export/uploads.js';
import type { HttpSender } from '../../src/export/transport/http-sender.js';
import { loadUndici } from '../../src/export/transport/undici-parts.js';
import type { Upstream } from '../../src/export/upstream.js';
import { Logger } from '../../src/log.js';
import { registerPath, runNode } from '../support/child.js';

/** Prints, from the app's first line, whether the agent's HTTP client is loaded already. */
const APP = `
  const loaded = Object.keys(require.cache).some((file) => file.replace(/\\\\/g, '/').endsWith('undici/lib/dispatcher/agent.js'));
  console.log(loaded ? 'loaded before the app' : 'not loaded');
`;

it('with a remote destination, the HTTP client is loaded before the app’s first line, and the process ends when the app does', async () => {
  const app = runNode(['--import', registerPath, '-e', APP], { env: { PYROSCOPE_SERVER_ADDRESS: 'http://127.0.0.1:9', OTEL_TRACES_EXPORTER: 'none' } });
  const exit = await app.exited;
  assert.deepEqual(exit, { code: 0, signal: null }, app.stderr);
  assert.equal(app.stdout.trim(), 'loaded before the app');
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
