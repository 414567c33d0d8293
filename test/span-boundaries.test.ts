/**
 * Where a span's labels stop. The sampler's context lives in the async context frame; a span's
 * labels set inside `context.with()` must leave with it, or the code after `with()` returns —
 * and every callback it schedules — is charged to a span it never ran in.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, runCli } from './support/child.js';
import { cpuIngests } from './support/linking.js';
import { startReceiver } from './support/receiver.js';

test('samples after context.with() returns carry no span, though the span is still open', async () => {
  const receiver = await startReceiver();
  try {
    const app = runCli(['--server', receiver.url, '--otlp-endpoint', receiver.url, '--service-name', 'span-boundaries', fixture('apps/span-boundaries.mjs')], {
      env: { PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS: '2000' },
    });
    const exit = await app.exit();
    assert.equal(exit.code, 0, app.stderr);

    const jobs = new Set(receiver.spans.filter((span) => span.name === 'job').map((span) => span.spanId));
    assert.equal(jobs.size, 5, 'every job span was exported');
    const seen = { hot_in_span: 0, hot_after_with: 0, hot_after_with_callback: 0 };
    for (const ingest of cpuIngests(receiver)) {
      for (const sample of ingest.samples) {
        const where = sample.stack.find((name): name is keyof typeof seen => Object.hasOwn(seen, name));
        if (where === undefined) continue;
        seen[where] += sample.values.samples ?? 1;
        const spanId = sample.labels.span_id;
        if (where === 'hot_in_span') assert.ok(spanId !== undefined && jobs.has(spanId), `a sample inside the span is labelled with it, not ${spanId}`);
        else assert.equal(spanId, undefined, `${where} ran outside the span's context but is labelled with ${spanId}`);
      }
    }
    for (const [where, count] of Object.entries(seen)) assert.ok(count > 0, `CPU samples of ${where} arrived`);
  } finally {
    await receiver.close();
  }
});
