/**
 * What a window's flush costs the app's event loop, as pyro-run reports it: the slices counted by
 * `runSliced`, the encoder's debug line per window, and the same cost on its diagnostics channel
 * (which the benchmarks subscribe to).
 */
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { it } from 'node:test';
import { PPROF, WINDOW_COST_CHANNEL, WindowEncoder, type EncodedProfile, type WindowCost } from '../../src/profiling/window-encoder.js';
import { Logger } from '../../src/log.js';
import type { ProfileWindow } from '../../src/profiling/profiler.js';
import { timePart } from '../../src/profiling/time-profile.js';
import { runSliced, type SliceStats } from '../../src/util/slices.js';
import { leafWindow } from '../support/raw-window.js';

/** Steps that each hold the thread for `ms`. */
function* busySteps(count: number, ms: number): Generator<void, number> {
  for (let i = 0; i < count; i++) {
    const until = performance.now() + ms;
    while (performance.now() < until);
    yield;
  }
  return count;
}

it('runSliced counts each slice and keeps the longest', async () => {
  const stats: SliceStats = { slices: 0, longestMs: 0 };
  // Each 3 ms step crosses the 2 ms budget, so each ends a slice; the return is a last, short one.
  assert.equal(await runSliced(busySteps(3, 3), 2, stats), 3);
  assert.equal(stats.slices, 4);
  assert.ok(stats.longestMs >= 3, `longest ${stats.longestMs} ms`);

  const whole: SliceStats = { slices: 0, longestMs: 0 };
  await runSliced(busySteps(3, 3), 1_000, whole);
  assert.equal(whole.slices, 1);
  assert.ok(whole.longestMs >= 9, `longest ${whole.longestMs} ms`);
});

it("the encoder publishes each window's stops, slices and size on its diagnostics channel, and logs them in one line", async () => {
  const lines: string[] = [];
  const published: WindowCost[] = [];
  const onCost = (cost: unknown) => published.push(cost as WindowCost);
  subscribe(WINDOW_COST_CHANNEL, onCost);
  try {
    const encoder = new WindowEncoder(
      new Logger(
        'debug',
        (t) => t,
        (line) => lines.push(line),
      ),
      PPROF,
    );
    const window: ProfileWindow = {
      from: 1_700_000_000_000,
      until: 1_700_000_015_000,
      longestStopMs: 2.25,
      stops: 3,
      parts: [
        timePart([leafWindow(200, () => ({ timestamp: 0n, cpuTime: 1_000_000 }))], {
          intervalMicros: 10_000,
          types: ['cpu', 'wall'],
          spanOf: () => undefined,
          traceIdLabel: false,
        }),
      ],
    };
    const encoded = await new Promise<EncodedProfile[]>((resolve, reject) => encoder.encode(window, (_, profiles) => resolve(profiles), reject));

    assert.equal(published.length, 1);
    const [cost] = published;
    assert.ok(cost);
    assert.equal(cost.longestStopMs, 2.25);
    assert.equal(cost.stops, 3);
    assert.ok(cost.slices >= 3, `${cost.slices} slices: the build and each profile's encoding`);
    assert.ok(cost.longestSliceMs > 0);
    assert.equal(cost.kb, encoded.reduce((sum, p) => sum + p.body.length, 0) / 1024);
    assert.deepEqual(lines, [
      `pyro-run: debug: profile window: 3 stops of at most 2.3 ms, then ${cost.slices} slices of at most ${cost.longestSliceMs.toFixed(1)} ms; ${cost.kb.toFixed(1)} KB gzipped\n`,
    ]);
  } finally {
    unsubscribe(WINDOW_COST_CHANNEL, onCost);
  }
});
