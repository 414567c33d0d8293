/**
 * An app's own spans: made with the app's @opentelemetry/api (its ESM build from node_modules),
 * they join pyro-run's traces (pyro-run runs a bundled copy of the API: both must share the global
 * tracer provider and context), and the CPU they burn is labelled with the request's root span.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, runCli, runNode } from '../support/child.js';
import { cpuIngests, serverSpans } from '../support/linking.js';
import { startReceiver } from '../support/receiver.js';

const REQUESTS = 6;

test("the app's own spans are children of the request span, and their CPU carries its span_id", async () => {
  const receiver = await startReceiver();
  try {
    const app = runCli(['--server', receiver.url, '--otlp-endpoint', receiver.url, '--service-name', 'custom-spans', fixture('apps/custom-spans.mjs')]);
    const port = (await app.line(/listening (\d+)/))[1];
    for (let i = 0; i < REQUESTS; i++) assert.equal((await fetch(`http://127.0.0.1:${port}/basket/${i}`)).status, 200);
    app.process.kill('SIGTERM');
    const exit = await app.exit();
    assert.equal(exit.code, 0, app.stderr);

    const servers = serverSpans(receiver);
    const custom = receiver.spans.filter((span) => span.name === 'price basket');
    assert.equal(servers.length, REQUESTS);
    assert.equal(custom.length, REQUESTS, 'every custom span was exported');
    const serverById = new Map(servers.map((span) => [span.spanId, span]));
    for (const span of custom) {
      const parent = serverById.get(span.parentSpanId);
      assert.ok(parent, `custom span ${span.spanId} has the request span as parent`);
      assert.equal(span.traceId, parent.traceId);
      assert.equal(span.attributes['basket.items'], 3);
      assert.equal(span.scope.name, 'shop');
    }

    let hot = 0;
    for (const ingest of cpuIngests(receiver)) {
      for (const sample of ingest.samples) {
        if (!sample.stack.includes('hot_custom_span')) continue;
        hot += sample.values.samples ?? 1;
        const root = sample.labels.span_id;
        assert.ok(root !== undefined && serverById.has(root), `a hot sample is labelled with a request span, not ${root}`);
      }
    }
    assert.ok(hot > 0, 'CPU samples in the custom span’s work arrived');
  } finally {
    await receiver.close();
  }
});

test('an app that sets its own diagnostic logger gets it as without pyro-run: its lines, and no word of the logger it replaced', async () => {
  const bare = runNode([fixture('apps/own-diag-logger.cjs')]);
  assert.equal((await bare.exit()).code, 0, bare.stderr);
  const app = runCli(['--profiles', 'none', '--traces-exporter', 'none', fixture('apps/own-diag-logger.cjs')]);
  assert.equal((await app.exit()).code, 0, app.stderr);
  assert.match(bare.stderr, /the app warns through its own logger/);
  assert.equal(app.stderr, bare.stderr);
  assert.equal(app.stdout, bare.stdout);
});
