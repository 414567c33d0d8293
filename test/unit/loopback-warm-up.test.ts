/**
 * The HTTP client's request path is run once at start-up against a server of our own on the
 * loopback interface: one exchange, on 127.0.0.1 only, and nothing of it left open.
 */
import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import { it } from 'node:test';
import { warmUpOnLoopback } from '../../src/export/transport/loopback-warm-up.js';
import { loadUndici } from '../../src/export/transport/undici-parts.js';

/** undici's requests as its diagnostics channels announce them, and the connections it opened. */
function watchUndici(): { origins: string[]; connected: string[]; stop(): void } {
  const origins: string[] = [];
  const connected: string[] = [];
  const onCreate = (message: unknown) => void origins.push(String((message as { request: { origin: string } }).request.origin));
  const onConnected = (message: unknown) => {
    const { connectParams } = message as { connectParams: { hostname: string; port: string } };
    connected.push(`${connectParams.hostname}:${connectParams.port}`);
  };
  diagnostics.subscribe('undici:request:create', onCreate);
  diagnostics.subscribe('undici:client:connected', onConnected);
  return {
    origins,
    connected,
    stop() {
      diagnostics.unsubscribe('undici:request:create', onCreate);
      diagnostics.unsubscribe('undici:client:connected', onConnected);
    },
  };
}

it('one request goes through the client to a server of its own on 127.0.0.1, and is answered', async () => {
  const watch = watchUndici();
  try {
    await warmUpOnLoopback(loadUndici(), { timeoutMs: 5000 });
    assert.equal(watch.origins.length, 1, `requests: ${watch.origins.join(', ')}`);
    assert.match(watch.origins[0]!, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.deepEqual(
      watch.connected.map((to) => to.split(':')[0]),
      ['127.0.0.1'],
      'one connection, to the loopback',
    );
  } finally {
    watch.stop();
  }
});

it('its server and connection do not keep the process alive, while connected or after the exchange', async () => {
  const tcpHandles = () => process.getActiveResourcesInfo().filter((kind) => kind.startsWith('TCP')).length;
  const before = tcpHandles();
  let whileConnected: number | undefined;
  const onConnected = () => void (whileConnected = tcpHandles());
  diagnostics.subscribe('undici:client:connected', onConnected);
  try {
    await warmUpOnLoopback(loadUndici(), { timeoutMs: 5000 });
  } finally {
    diagnostics.unsubscribe('undici:client:connected', onConnected);
  }
  assert.equal(whileConnected, before, 'while connected');
  assert.equal(tcpHandles(), before, 'after the exchange');
});
