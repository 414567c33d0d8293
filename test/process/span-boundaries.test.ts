/**
 * Where a span's labels stop. The sampler's context lives in the async context frame; a span's
 * labels set inside `context.with()` must leave with it, or the code after `with()` returns —
 * and every callback it schedules — is charged to a span it never ran in. The same for a context
 * entered with `context.attach()` once its token is disposed. On each runtime: the frame regime
 * (Node 24, 26) and the global slot (Node 22 without AsyncContextFrame) keep different books.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Child, fixture, NODE22, NODE26, runCli, runNode } from '../support/child.js';
import { cpuIngests } from '../support/linking.js';
import { startReceiver } from '../support/receiver.js';

const APP = fixture('apps/span-boundaries.mjs');
const runtimes: { name: string; start: (env: Record<string, string>) => Child }[] = [
  { name: 'Node 24 through the CLI', start: (env) => runCli([APP], { env }) },
  { name: 'Node 22 without AsyncContextFrame', start: (env) => runNode(['--import', 'pyro-run/register', APP], { env, node: NODE22 }) },
  { name: 'Node 26', start: (env) => runNode(['--import', 'pyro-run/register', APP], { env, node: NODE26 }) },
];

for (const runtime of runtimes) {
  test(`${runtime.name}: samples after context.with() returns, or after an attached context is disposed, carry no span, though the span is still open`, async () => {
    const receiver = await startReceiver();
    try {
      const app = runtime.start({
        PYROSCOPE_SERVER_ADDRESS: receiver.url,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_SERVICE_NAME: 'span-boundaries',
        PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS: '2000',
      });
      const exit = await app.exit();
      assert.equal(exit.code, 0, app.stderr);

      const jobs = new Set(receiver.spans.filter((span) => span.name === 'job').map((span) => span.spanId));
      assert.equal(jobs.size, 5, 'every job span was exported');
      const attached = new Set(receiver.spans.filter((span) => span.name === 'attached').map((span) => span.spanId));
      assert.equal(attached.size, 5, 'every attached span was exported');
      const inside = { hot_in_span: jobs, hot_attached: attached };
      const seen = { hot_in_span: 0, hot_after_with: 0, hot_after_with_callback: 0, hot_attached: 0, hot_after_detach: 0 };
      for (const ingest of cpuIngests(receiver)) {
        for (const sample of ingest.samples) {
          const where = sample.stack.find((name): name is keyof typeof seen => Object.hasOwn(seen, name));
          if (where === undefined) continue;
          seen[where] += sample.values.samples ?? 1;
          const spanId = sample.labels.span_id;
          if (where === 'hot_in_span' || where === 'hot_attached')
            assert.ok(spanId !== undefined && inside[where].has(spanId), `a sample of ${where} is labelled with its span, not ${spanId}`);
          else assert.equal(spanId, undefined, `${where} ran outside the span's context but is labelled with ${spanId}`);
        }
      }
      for (const [where, count] of Object.entries(seen)) assert.ok(count > 0, `CPU samples of ${where} arrived`);
    } finally {
      await receiver.close();
    }
  });
}
