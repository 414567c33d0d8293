/**
 * A thread whose event loop stalls for longer than two profile windows: the sampler cannot be
 * stopped during the stall, so everything it sampled meanwhile waits in its buffer until the loop
 * turns. All of it must reach the CPU profile, under the stalling function and the span of the
 * request that stalled, on the main thread and in a worker.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, registerPath, runNode } from '../support/child.js';
import { cpuIngests, linkedEnv, serverSpans } from '../support/linking.js';
import { startReceiver } from '../support/receiver.js';

/** 1-second windows and 2 ms samples (linkedEnv): a stall of 4.5 s outlasts four windows. */
const STALL_MS = 4_500;

test('a stall longer than two windows keeps all its CPU samples, on the main thread and in a worker', { timeout: 60_000 }, async (t) => {
  const receiver = await startReceiver();
  try {
    const app = runNode(['--import', registerPath, fixture('stalls/app.mjs')], { env: linkedEnv(receiver) });
    const port = (await app.line(/listening (\d+)/))[1];
    const stall = async (where: string) => ((await (await fetch(`http://127.0.0.1:${port}/${where}/${STALL_MS}`)).json()) as { cpuMicros: number }).cpuMicros;
    const measured = { main: await stall('main'), worker: await stall('worker') };
    app.process.kill('SIGTERM');
    const exit = await app.exit();
    assert.equal(exit.signal, 'SIGTERM', `${JSON.stringify(exit)}\n${app.stderr}`);
    assert.equal(app.stderr, '', 'nothing to warn about: no sample was dropped');

    const spanOf = new Map(serverSpans(receiver).map((span) => [String(span.attributes['url.path']).split('/')[1], span.spanId]));
    for (const [where, cpuMicros] of Object.entries(measured)) {
      const thread = where === 'main' ? 'main' : 'worker 1';
      let cpuNanos = 0;
      let otherSpan = 0;
      for (const ingest of cpuIngests(receiver)) {
        for (const sample of ingest.samples) {
          if (!sample.stack.includes('stall') || sample.labels.thread_name !== thread) continue;
          cpuNanos += sample.values.cpu ?? 0;
          if (sample.labels.span_id !== spanOf.get(where)) otherSpan += sample.values.samples ?? 1;
        }
      }
      // Judged against the CPU the stalled thread measured, however much a loaded machine gave it:
      // the buffered samples are taken every 2 ms of wall time through the 4.5 s stall whatever
      // the thread's share of a CPU, and each carries the thread's CPU time since the one before,
      // so a lost sample lowers the share at any load (a stall that got no CPU makes it NaN, a
      // failure).
      const share = cpuNanos / 1000 / cpuMicros;
      t.diagnostic(
        `${thread}: the stall took ${(cpuMicros / 1000).toFixed(0)} ms of CPU in ${STALL_MS} ms; its samples carry ${(share * 100).toFixed(1)}% of it`,
      );
      assert.ok(
        share >= 0.9 && share <= 1.1,
        `${thread}: ${(cpuNanos / 1e6).toFixed(0)} ms of CPU in the stall's samples, the thread measured ${(cpuMicros / 1000).toFixed(0)} ms`,
      );
      assert.equal(otherSpan, 0, `every sample of the ${thread} thread's stall carries the span of the request that stalled it`);
    }
  } finally {
    await receiver.close();
  }
});
