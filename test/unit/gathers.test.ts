/**
 * Gathers: the time sampler's tree is taken several times within a window, so that no single stop
 * of V8's profiler holds a large tree, and the window is built from all of them. The pace adapts
 * to what a stop holds the event loop for; the window built from the real sampler's trees holds
 * every gather's samples, each stack once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Profile as EsmProfile } from 'pprof-format';
import { GATHER, gatherNow, nextGatherMs } from '../../src/profiling/gather-pace.js';
import { Profiler } from '../../src/profiling/profiler.js';
import { judgeStuck, SUSPECT_MICROS } from '../../src/profiling/sampler.js';
import { buildWindow } from '../../src/profiling/profile-window.js';
import { runNow } from '../../src/util/slices.js';
import { functionNamesOf } from '../support/pprof-helpers.js';
import { decodePprof } from '../support/pprof-wire.js';

describe('the pace of gathers', () => {
  const WINDOW = 15_000;
  const cases: { last: number; held: number; next: number; why: string }[] = [
    { last: 1_000, held: 1.2, next: 1_000, why: 'near the budget: the same pace' },
    { last: 1_000, held: 5, next: 500, why: 'over the budget: twice as often' },
    { last: 400, held: 9, next: GATHER.floorMs, why: 'never more often than the floor' },
    { last: GATHER.floorMs, held: 30, next: GATHER.floorMs, why: 'at the floor, however long the stop' },
    { last: 1_000, held: 0.2, next: 2_000, why: 'far under the budget: half as often' },
    { last: 10_000, held: 0.1, next: WINDOW, why: 'never less often than once a window' },
    { last: WINDOW, held: 1, next: WINDOW, why: 'a small app stays at once a window' },
  ];
  for (const c of cases) {
    it(`${c.last} ms, a stop of ${c.held} ms → ${c.next} ms (${c.why})`, () => {
      assert.equal(nextGatherMs(c.last, c.held, WINDOW), c.next);
    });
  }
});

describe('when a gather is taken', () => {
  const cases: { now: number; lastStop: number; nextCut: number; taken: boolean; why: string }[] = [
    { now: 5_000, lastStop: 4_000, nextCut: 10_000, taken: true, why: 'mid-window' },
    { now: 5_000, lastStop: 5_000 - GATHER.floorMs + 1, nextCut: 10_000, taken: false, why: 'right after the last stop' },
    { now: 9_900, lastStop: 9_000, nextCut: 10_000, taken: false, why: 'right before the cut' },
    { now: 10_050, lastStop: 9_000, nextCut: 10_000, taken: false, why: 'the cut is overdue (the loop was busy)' },
    { now: 5_000, lastStop: 5_000 - GATHER.floorMs, nextCut: 5_000 + GATHER.floorMs, taken: true, why: 'exactly a floor from each' },
  ];
  for (const c of cases) {
    it(`${c.taken ? 'taken' : 'skipped'} ${c.why}`, () => {
      assert.equal(gatherNow(c.now, c.lastStop, c.nextCut), c.taken);
    });
  }
});

describe('a stop that looks like V8’s profiler got stuck', () => {
  const { certain: C, maybe: M } = SUSPECT_MICROS;
  const cases: { before: number; found: number; lasted: number; stuck: number; carried: number; why: string }[] = [
    { before: 0, found: 0, lasted: 250_000, stuck: 0, carried: 0, why: 'nothing found' },
    { before: C / 2, found: 0, lasted: 250_000, stuck: 0, carried: 0, why: 'a sound stop ends a run of suspect ones' },
    { before: 0, found: 2, lasted: 250_000, stuck: 0, carried: 250_000, why: 'a short empty profile: suspect only' },
    { before: 0, found: 1, lasted: 400_000, stuck: 0, carried: 400_000, why: 'a short profile missing its first sample: suspect only' },
    { before: C - 250_000, found: 2, lasted: 250_000, stuck: 2, carried: 0, why: 'empty profiles covering a second: stuck, restarted' },
    { before: 0, found: 2, lasted: C, stuck: 2, carried: 0, why: 'an empty window of a second or more is judged alone, as before gathers' },
    {
      before: C,
      found: 1,
      lasted: 250_000,
      stuck: 0,
      carried: C + 250_000,
      why: 'profiles missing their first sample for over a second (a processor running behind): suspect still',
    },
    { before: M - 250_000, found: 1, lasted: 250_000, stuck: 1, carried: 0, why: 'profiles missing their first sample for ten seconds: stuck, restarted' },
    { before: M - 250_000, found: 2, lasted: 250_000, stuck: 2, carried: 0, why: 'a run of both signs is judged by the last: an empty profile’s bar' },
    { before: 0, found: 1, lasted: M, stuck: 1, carried: 0, why: 'a ten-second window missing its first sample is judged alone, as before gathers' },
  ];
  for (const c of cases) {
    it(`${c.why} → ${c.stuck}`, () => {
      assert.deepEqual(judgeStuck(c.before, c.found, c.lasted), { stuck: c.stuck, suspectMicros: c.carried });
    });
  }
});

/** Keep the thread busy for `ms`, each under a name of its own. */
const burners = {
  burnFirst: (ms: number) => spin(ms),
  burnSecond: (ms: number) => spin(ms),
  burnThird: (ms: number) => spin(ms),
};
function spin(ms: number): number {
  let x = 0;
  for (const until = performance.now() + ms; performance.now() < until; ) x += Math.sqrt(x + 1);
  return x;
}

it('a window gathered three times holds what the sampler saw between each stop, each stack once', () => {
  const profiler = new Profiler({
    types: ['cpu', 'wall'],
    samplingIntervalMicros: 1_000,
    flushIntervalMs: 60_000,
    traceIdLabel: false,
    heap: { intervalBytes: 524_288, stackDepth: 64 },
  });
  profiler.start();
  burners.burnFirst(150);
  const held = profiler.gather();
  burners.burnSecond(150);
  profiler.gather();
  burners.burnFirst(150);
  burners.burnThird(150);
  const window = profiler.cut(true);
  assert.ok(window && held !== undefined);
  assert.equal(window.stops, 3);
  assert.ok(window.longestStopMs >= held, `the window reports its longest stop (${window.longestStopMs} ms, a gather held ${held} ms)`);

  const wall = decodePprof(runNow(buildWindow(window)).get('wall')!.encode()).profile as EsmProfile;
  const hits = (name: string) => wall.sample.filter((s) => functionNamesOf(wall, s).includes(name)).reduce((sum, s) => sum + Number(s.value[0]), 0);
  // 150 ms at 1 ms is ~150 samples; V8 samples less often than asked on a busy machine (45 seen
  // with other test files running), so only a share of it is asked for.
  assert.ok(hits('burnSecond') >= 20, `burnSecond: ${hits('burnSecond')} samples`);
  assert.ok(hits('burnThird') >= 20, `burnThird: ${hits('burnThird')} samples`);
  assert.ok(hits('burnFirst') >= 2 * 20, `burnFirst ran before the first gather and after the second: ${hits('burnFirst')} samples`);
  const stacks = wall.sample.map((s) => `${s.locationId.join(',')}|${s.label.map((l) => `${l.key}=${l.str}`).join(',')}`);
  assert.equal(new Set(stacks).size, stacks.length, 'one sample per stack and labels');
  assert.ok(Number(wall.durationNanos) >= 600 * 1_000_000, `the window lasts as long as its trees together: ${Number(wall.durationNanos) / 1e6} ms`);
});
