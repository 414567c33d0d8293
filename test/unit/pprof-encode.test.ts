/**
 * encodeInSteps, run in slices, must write exactly the bytes `Profile.encode()` writes (the server decodes either
 * the same way), while letting the event loop turn between slices of samples.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { encodeInSteps } from '../../src/profiling/pprof-encode.js';
import { pprofFormat } from '../../src/profiling/pprof-format.js';
import { runNow, runSliced } from '../../src/util/slices.js';
import { SpanLabels } from '../../src/span-link/labels.js';
import { buildTimeProfiles } from '../../src/profiling/time-profile.js';
import { decodePprof } from '../support/pprof-wire.js';
import { leafWindow } from '../support/raw-window.js';
import { turnsDuring } from '../support/turns.js';

const span = new SpanLabels('00f067aa0ba902b7', '4bf92f3577b34da6a3ce929d0e0e4736', { name: 'GET /users/:id' });

/** A window of `n` leaf functions, every other one run in a span, each with one sample of CPU time. */
function profiles(n: number) {
  const raw = leafWindow(n, (i) => ({ context: i % 2 ? span : undefined, timestamp: 0n, cpuTime: 1_000_000 + i }));
  return runNow(
    buildTimeProfiles([raw], 1_700_000_000_000, {
      intervalMicros: 10_000,
      types: ['cpu', 'wall'],
      spanOf: (c) => (c.context === span ? span : undefined),
      traceIdLabel: true,
    }),
  );
}

for (const n of [0, 1, 31, 32, 33, 3000]) {
  it(`${n} samples: the same bytes as encode(), and they decode`, async () => {
    for (const [type, profile] of profiles(n)) {
      const sliced = await runSliced(encodeInSteps(profile), 2);
      assert.deepEqual(sliced, profile.encode(), type);
      assert.equal(decodePprof(sliced).profile.sample.length, n, type);
    }
  });
}

it('lets the event loop turn between slices of samples, of locations and of functions', async () => {
  const wall = profiles(3000).get('wall');
  assert.ok(wall);
  // 3000 samples, and as many locations and functions (one leaf function each).
  assert.equal(wall.location.length, 3000);
  assert.equal(wall.function.length, 3000);
  const { turns } = await turnsDuring(() => runSliced(encodeInSteps(wall), 0));
  const steps = Math.ceil(3000 / 32) + 2 * Math.ceil(3000 / 64);
  assert.ok(turns >= steps - 1, `the event loop turned ${turns} times for ${steps} steps`);
});

it('deep stacks, values past 2^32, zeros, numeric labels, and a negative value: the same bytes as encode()', async () => {
  const { Profile, Sample, Label, ValueType, StringTable } = pprofFormat();
  const strings = new StringTable();
  const key = strings.dedup('span_id');
  const str = strings.dedup('00f067aa0ba902b7');
  const make = (value: number[]) =>
    new Profile({
      sampleType: [new ValueType({ type: strings.dedup('samples'), unit: strings.dedup('count') })],
      sample: [
        new Sample({ locationId: Array.from({ length: 120 }, (_, i) => i * 977 + 1), value, label: [new Label({ key, str })] }),
        new Sample({ locationId: [1, 0, 2 ** 40], value: [0, 0], label: [new Label({ key, num: 3, numUnit: str }), new Label({ key, str: 0 })] }),
      ],
      stringTable: strings,
    });
  for (const value of [
    [1, 15_000_000_000],
    [2 ** 53 - 1, 127],
    [-1, 5],
  ]) {
    const profile = make(value);
    assert.deepEqual(await runSliced(encodeInSteps(profile), 2), profile.encode(), `values ${value.join(', ')}`);
  }
});
