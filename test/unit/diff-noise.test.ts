/**
 * How `pyro-run diff` judges noise, as tables: the seeded bootstrap's standard error, the normal
 * quantile the intervals are read with, the width that covers every comparison of a diff at once,
 * and when a change counts as beyond the noise.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { differenceError, normalQuantile, seededRandom, seedOf, statisticOf } from '../../src/diff/bootstrap.js';
import { DEFAULT_NOISE, isBeyondNoise, metricChange, zFor } from '../../src/diff/metric-change.js';

const OPTIONS = { resamples: 1000, maxDraws: 4000, seed: 7 };
/** n values with mean `mean` and standard deviation `sd`, evenly spread (±sd alternately). */
const spread = (n: number, mean: number, sd: number) => Array.from({ length: n }, (_, i) => mean + (i % 2 === 0 ? sd : -sd));

describe('the seeded generator', () => {
  it('gives the same sequence for the same seed, another for another, always in [0, 1)', () => {
    const take = (seed: number) => Array.from({ length: 1000 }, seededRandom(seed));
    assert.deepEqual(take(1), take(1));
    assert.notDeepEqual(take(1), take(2));
    assert.ok(take(3).every((x) => x >= 0 && x < 1));
  });

  it("a seed depends on the text only, so an endpoint's verdict does not depend on what else is compared", () => {
    assert.equal(seedOf('2 POST /checkout\0cpuPerRequest'), seedOf('2 POST /checkout\0cpuPerRequest'));
    assert.notEqual(seedOf('2 POST /checkout\0cpuPerRequest'), seedOf('2 POST /checkout\0p95'));
  });
});

describe('the statistic of a run', () => {
  const cases: [string, number[], Parameters<typeof statisticOf>[1], number][] = [
    ['the mean', [1, 2, 3, 10], { kind: 'mean' }, 4],
    ['p50 by the nearest rank, in any order', [40, 10, 30, 20], { kind: 'percentile', p: 50 }, 20],
    ['p95 of 20 values is the 19th', Array.from({ length: 20 }, (_, i) => 20 - i), { kind: 'percentile', p: 95 }, 19],
  ];
  for (const [name, values, statistic, expected] of cases) it(name, () => assert.equal(statisticOf(values, statistic), expected));
});

describe("the bootstrap's standard error of a difference", () => {
  it('is 0 when every request took the same', () => {
    assert.equal(differenceError([5, 5, 5], [7, 7, 7, 7], { kind: 'mean' }, OPTIONS), 0);
  });

  it('of means is close to √(sd²/n₁ + sd²/n₂)', () => {
    const error = differenceError(spread(400, 100, 20), spread(100, 100, 20), { kind: 'mean' }, OPTIONS);
    const expected = Math.sqrt(400 / 400 + 400 / 100);
    assert.ok(Math.abs(error / expected - 1) < 0.1, `${error} vs ${expected}`);
  });

  it('is the same for the same inputs (seeded), and shrinks as requests grow', () => {
    const small = differenceError(spread(100, 10, 3), spread(100, 10, 3), { kind: 'percentile', p: 95 }, OPTIONS);
    assert.equal(differenceError(spread(100, 10, 3), spread(100, 10, 3), { kind: 'percentile', p: 95 }, OPTIONS), small);
    const mean = (n: number) => differenceError(spread(n, 10, 3), spread(n, 10, 3), { kind: 'mean' }, OPTIONS);
    assert.ok(Math.abs(mean(100) / mean(400) - 2) < 0.25, `${mean(100)} / ${mean(400)}`);
  });

  it('drawn maxDraws at a time from a larger run, spreads as if drawn whole', () => {
    const values = Array.from({ length: 20_000 }, (_, i) => (i * 7919) % 1000);
    const whole = differenceError(values, values, { kind: 'mean' }, { ...OPTIONS, maxDraws: 20_000, resamples: 300 });
    const capped = differenceError(values, values, { kind: 'mean' }, { ...OPTIONS, maxDraws: 2000, resamples: 300 });
    assert.ok(Math.abs(capped / whole - 1) < 0.15, `${capped} vs ${whole}`);
  });
});

describe('the normal quantile', () => {
  const cases: [number, number][] = [
    [0.5, 0],
    [0.975, 1.959964],
    [0.995, 2.575829],
    [0.999375, 3.227218],
    [0.001, -3.090232],
    [1e-6, -4.753424],
  ];
  for (const [p, z] of cases) it(`P(Z ≤ ${z}) = ${p}`, () => assert.ok(Math.abs(normalQuantile(p) - z) < 1e-5, String(normalQuantile(p))));
  it('has no value at 0 or 1', () => {
    assert.throws(() => normalQuantile(0), RangeError);
    assert.throws(() => normalQuantile(1), RangeError);
  });
});

describe('how wide the intervals are', () => {
  it('one comparison at 99%: 2.58 standard errors each side', () => assert.ok(Math.abs(zFor(99, 1) - 2.5758) < 1e-3));
  it('eight at once (two endpoints): each interval widens so that all eight hold 99 times in 100', () => assert.ok(Math.abs(zFor(99, 8) - 3.2272) < 1e-3));
  it('no comparison at all reads as one', () => assert.equal(zFor(99, 0), zFor(99, 1)));
});

describe('beyond the noise', () => {
  const cases: [string, { low: number; high: number }, number | null, boolean][] = [
    ['an interval above 0 and a change past the minimum', { low: 1, high: 3 }, 0.2, true],
    ['an interval below 0 and a drop past the minimum', { low: -3, high: -1 }, -0.2, true],
    ['an interval that holds 0', { low: -1, high: 3 }, 0.2, false],
    ['a sure change smaller than the minimum (a machine can drift that much between runs)', { low: 0.1, high: 0.3 }, 0.05, false],
    ['from 0 to something', { low: 1, high: 3 }, null, true],
  ];
  for (const [name, interval, relative, beyond] of cases)
    it(`${name}: ${beyond ? 'beyond' : 'within'}`, () => assert.equal(isBeyondNoise(interval, relative, 0.1), beyond));

  it('the same latency bucket on both sides is no change, however many requests', () => {
    const change = metricChange(Array(500).fill(16.1e6), Array(800).fill(16.1e6), 'p50', 'GET /a', DEFAULT_NOISE, 3.2);
    assert.deepEqual({ ...change.interval, beyond: change.beyondNoise, relative: change.relativeChange }, { low: 0, high: 0, beyond: false, relative: 0 });
  });

  it('too few requests: the change is given, never judged', () => {
    const change = metricChange([1, 1, 1], [9, 9, 9], 'cpuPerRequest', 'GET /a', DEFAULT_NOISE, undefined);
    assert.deepEqual([change.change, change.relativeChange, change.interval, change.beyondNoise], [8, 8, null, false]);
  });
});

describe('latencies of requests that wait together', () => {
  /**
   * One run of `requests` latencies in milliseconds, as a load test with `inFlight` requests at
   * once makes them: each group in flight together shares one wait (now and then a stall of
   * 20–60 ms, as a scheduler or a collection gives), and each request adds its own service time.
   */
  function clusteredRun(random: () => number, requests: number, inFlight: number): number[] {
    const latencies: number[] = [];
    while (latencies.length < requests) {
      const shared = random() < 0.06 ? 20 + 40 * random() : 2 * random();
      for (let i = 0; i < inFlight; i++) latencies.push((shared + 8 + 2 * random()) * 1e6);
    }
    return latencies;
  }
  /** Of `pairs` pairs of runs of the same code, how many a p95 or p50 verdict calls changed. */
  function falseAlarms(inFlightTold: number, pairs: number): number {
    const random = seededRandom(11);
    const z = zFor(DEFAULT_NOISE.confidence, 8);
    // Fewer resamples than a diff takes: the verdicts here rest on the shares, the interval only widens.
    const noise = { ...DEFAULT_NOISE, resamples: 200 };
    let alarms = 0;
    for (let pair = 0; pair < pairs; pair++) {
      const before = clusteredRun(random, 400, 4);
      const after = clusteredRun(random, 400, 4);
      const verdicts = (['p50', 'p95'] as const).map((metric) => metricChange(before, after, metric, `GET /${pair}`, noise, z, inFlightTold));
      if (verdicts.some((change) => change.beyondNoise)) alarms++;
    }
    return alarms;
  }

  it('two runs of the same code, 4 requests in flight at once, p95 at the edge of the stalled requests: no latency change beyond the noise in 99 pairs of 100', () => {
    // Judged as independent draws, the same runs cry wolf far more often: the test would notice
    // the widening gone. Judged on the interval alone, without the shares, 2 pairs of 100 did.
    const told = falseAlarms(4, 100);
    const asIndependent = falseAlarms(1, 100);
    assert.ok(told <= 1, `${told} false alarms in 100 pairs (as independent draws: ${asIndependent})`);
    assert.ok(asIndependent >= 5, `as independent draws: ${asIndependent} false alarms in 100 pairs`);
  });

  it("a CPU per request's interval is not widened: each request's CPU is its own", () => {
    const before = spread(400, 3e6, 0.5e6);
    const after = spread(400, 3.1e6, 0.5e6);
    const alone = metricChange(before, after, 'cpuPerRequest', 'GET /a', DEFAULT_NOISE, 3, 1);
    const together = metricChange(before, after, 'cpuPerRequest', 'GET /a', DEFAULT_NOISE, 3, 8);
    assert.deepEqual(together.interval, alone.interval);
    const p95 = (inFlight: number) =>
      metricChange(clusteredRun(seededRandom(3), 400, 4), clusteredRun(seededRandom(4), 400, 4), 'p95', 'GET /a', DEFAULT_NOISE, 3, inFlight);
    const [one, four] = [p95(1), p95(4)];
    assert.ok(
      Math.abs((four.interval!.high - four.interval!.low) / (one.interval!.high - one.interval!.low) - 2) < 1e-9,
      'a latency interval is √4 = 2 times as wide',
    );
  });
});
