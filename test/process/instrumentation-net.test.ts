/**
 * The net instrumentation runs from our bundle with `tls` loaded lazily (build/vendor-bundles.ts,
 * lazyTls): it must still tell TLS sockets from plain ones.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, runCli } from '../support/child.js';
import { startReceiver } from '../support/receiver.js';

test('net instrumentation: a TLS connection is a tls.connect span over its tcp.connect, a plain one a tcp.connect alone', async () => {
  const receiver = await startReceiver();
  try {
    const app = runCli(['--otlp-endpoint', receiver.url, '--profiles', 'none', fixture('apps/net-clients.mjs')]);
    const exit = await app.exit();
    assert.equal(exit.code, 0, app.stderr);
    assert.match(app.stdout, /done/);
    const tlsSpans = receiver.spans.filter((s) => s.name === 'tls.connect');
    assert.equal(tlsSpans.length, 1, receiver.spans.map((s) => s.name).join(', '));
    const tcp = receiver.spans.filter((s) => s.name === 'tcp.connect');
    const underTls = tcp.filter((s) => s.parentSpanId === tlsSpans[0]!.spanId);
    assert.equal(underTls.length, 1, 'the TLS connection’s TCP span is its child');
    const plain = tcp.filter((s) => s.parentSpanId === '');
    assert.ok(plain.length >= 1, 'the plain connection is a tcp.connect of its own');
    assert.ok(
      plain.every((s) => s.attributes['server.port'] !== underTls[0]!.attributes['server.port']),
      'and not the TLS one',
    );
  } finally {
    await receiver.close();
  }
});
