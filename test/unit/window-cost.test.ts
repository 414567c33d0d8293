/**
 * What a window's flush costs the app's event loop, as pyro-run reports it at debug level: the
 * slices counted by `runSliced`, and the encoder's line per window (the flush-pause benchmark reads
 * it from the app's stderr).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { parseWindowCost, PPROF, WindowEncoder, windowCostLine, type EncodedProfile } from '../../src/profiling/window-encoder.js';
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

it('the encoder logs one line per window with its stops, slices and size, which parseWindowCost reads back', async () => {
  const lines: string[] = [];
  const encoder = new WindowEncoder(new Logger('debug', (t) => t, (line) => lines.push(line)), PPROF);
  const window: ProfileWindow = {
    from: 1_700_000_000_000,
    until: 1_700_000_015_000,
    longestStopMs: 2.25,
    stops: 3,
    parts: [timePart([leafWindow(200, () => ({ timestamp: 0n, cpuTime: 1_000_000 }))], { intervalMicros: 10_000, types: ['cpu', 'wall'], spanOf: () => undefined, traceIdLabel: false })],
  };
  const encoded = await new Promise<EncodedProfile[]>((resolve, reject) => encoder.encode(window, (_, profiles) => resolve(profiles), reject));

  assert.equal(lines.length, 1);
  const cost = parseWindowCost(lines[0] ?? '');
  assert.ok(cost, lines[0]);
  assert.equal(cost.longestStopMs, 2.3);
  assert.equal(cost.stops, 3);
  assert.ok(cost.slices >= 3, `${cost.slices} slices: the build and each profile's encoding`);
  assert.ok(cost.longestSliceMs > 0);
  assert.equal(cost.kb, Number((encoded.reduce((sum, p) => sum + p.body.length, 0) / 1024).toFixed(1)));
  assert.equal(parseWindowCost('pyro-run: debug: instrumentations: http, express'), undefined);
  assert.deepEqual(parseWindowCost(windowCostLine({ longestStopMs: 1.5, stops: 8, slices: 7, longestSliceMs: 4.25, kb: 60 })), { longestStopMs: 1.5, stops: 8, slices: 7, longestSliceMs: 4.3, kb: 60 });
});
