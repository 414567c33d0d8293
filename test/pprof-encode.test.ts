/**
 * encodeInSteps, run in slices, must write exactly the bytes `Profile.encode()` writes (the server decodes either
 * the same way), while letting the event loop turn between slices of samples.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { TimeProfileNode } from '@datadog/pprof/out/src/v8-types.js';
import { encodeInSteps } from '../src/pprof-encode.js';
import { runNow, runSliced } from '../src/slices.js';
import { SpanLabels } from '../src/span-link/labels.js';
import { buildWindowProfiles } from '../src/window-profile.js';
import { decodePprof } from './support/pprof-wire.js';
import { turnsDuring } from './support/turns.js';

const span = new SpanLabels('00f067aa0ba902b7', '4bf92f3577b34da6a3ce929d0e0e4736', { name: 'GET /users/:id' });

/** A window of `n` leaf functions, every other one run in a span, each with one sample of CPU time. */
function profiles(n: number) {
  const children: TimeProfileNode[] = Array.from({ length: n }, (_, i) => ({
    name: `f${i}`,
    scriptName: '/app/index.js',
    scriptId: 1,
    lineNumber: i + 1,
    columnNumber: 1,
    hitCount: 1,
    children: [],
    contexts: [{ context: i % 2 ? span : undefined, timestamp: 0n, cpuTime: 1_000_000 + i }],
  }));
  const raw = { startTime: 0, endTime: 15_000_000, hasCpuTime: true, topDownRoot: { name: '(root)', scriptName: '', hitCount: 0, children } };
  return runNow(buildWindowProfiles(raw, 1_700_000_000_000, { intervalMicros: 10_000, types: ['cpu', 'wall'], spanOf: (c) => (c.context === span ? span : undefined), traceIdLabel: true }));
}

for (const n of [0, 1, 127, 128, 129, 3000]) {
  it(`${n} samples: the same bytes as encode(), and they decode`, async () => {
    for (const [type, profile] of profiles(n)) {
      const sliced = await runSliced(encodeInSteps(profile), 2);
      assert.deepEqual(sliced, profile.encode(), type);
      assert.equal(decodePprof(sliced).profile.sample.length, n, type);
    }
  });
}

it('lets the event loop turn between slices', async () => {
  const wall = profiles(3000).get('wall');
  assert.ok(wall);
  const { turns } = await turnsDuring(() => runSliced(encodeInSteps(wall), 0));
  assert.ok(turns >= 3000 / 128 - 1, `the event loop turned ${turns} times`);
});
