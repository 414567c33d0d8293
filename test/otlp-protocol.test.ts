/** Spans reach the collector in each OTLP/HTTP encoding, linked the same way. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, runCli } from './support/child.js';
import { assertLinked } from './support/linking.js';
import { load } from './support/load.js';
import { startReceiver } from './support/receiver.js';

for (const [protocol, encoding] of [['http/protobuf', 'protobuf'], ['http/json', 'json']] as const) {
  test(`traces over OTLP ${protocol}`, async () => {
    const receiver = await startReceiver();
    try {
      const app = runCli(['--service-name', 'proto-check', '--server', receiver.url, '--otlp-traces-endpoint', receiver.tracesUrl, '--otlp-protocol', protocol, '--', fixture('apps/server.mjs')]);
      const port = (await app.line(/listening (\d+)/))[1];
      await load(`http://127.0.0.1:${port}`, (i) => `/work/${i}`, 12, 4);
      app.process.kill('SIGTERM');
      assert.equal((await app.exit()).signal, 'SIGTERM');
      assert.ok(receiver.traceExports.length > 0);
      for (const exported of receiver.traceExports) assert.equal(exported.encoding, encoding);
      assertLinked(receiver, 'proto-check');
    } finally {
      await receiver.close();
    }
  });
}
