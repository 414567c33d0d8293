/**
 * One metric of one endpoint, before and after, and whether its change is beyond the noise: its
 * interval — the change ± z bootstrap standard errors (bootstrap.ts) — excludes 0, and the change
 * is at least the minimum effect.
 *
 * A diff makes many comparisons at once (4 per endpoint), and at 95% each, two runs of the same
 * code with ten endpoints would show some change "beyond the noise" most of the time. So z is set
 * for the whole diff (Bonferroni): with `confidence` 99, two runs of the same code show no change
 * beyond the noise at least 99 times in 100, however many endpoints they have; the price is that
 * the more is compared, the larger a change must be to be seen.
 *
 * The standard error sees the noise between one run's requests, the profiler's sampling included;
 * it cannot see a machine that was slower during the whole of one run than during the other, so
 * a change smaller than the minimum effect is never called beyond the noise. A bootstrap over
 * requests takes them as independent draws, which their CPU and time on the thread are, but not
 * their latencies: requests in flight at once wait together (behind a stall, a burst, a slow
 * neighbour), so a run's latencies hold fewer independent draws than requests. A latency's
 * standard error is widened by √(requests in flight at once) — the design effect of clusters of
 * that size whose members share their fate entirely, an upper bound.
 *
 * A percentile's interval is not enough to judge it: where the percentile falls between two groups
 * of latencies (p95 at the edge of the few requests a stall held), it jumps from one group to the
 * other between runs of the same code, and no interval around a single value covers that. So a
 * percentile is beyond the noise only when, besides its interval and the minimum effect, the share
 * of each run's requests slower than the two runs' pooled percentile differs beyond z standard
 * errors (a two-proportion test, its variance widened as above): a test of where the requests lie,
 * not of one value. Pure.
 */
import { differenceError, type Interval, normalQuantile, seedOf, type Statistic, statisticOf } from './bootstrap.js';

/** What the diff compares per endpoint; each is per request, never a run's total. */
export const METRICS = ['cpuPerRequest', 'wallPerRequest', 'p50', 'p95'] as const;
export type MetricName = (typeof METRICS)[number];

export const STATISTIC: Record<MetricName, Statistic> = {
  cpuPerRequest: { kind: 'mean' },
  wallPerRequest: { kind: 'mean' },
  p50: { kind: 'percentile', p: 50 },
  p95: { kind: 'percentile', p: 95 },
};

/** The metrics whose requests in flight at once share their fate: latencies. */
const WAITED_TOGETHER: ReadonlySet<MetricName> = new Set(['p50', 'p95']);

/** How changes are judged (the footnote and --json say it back). */
export interface NoiseRule {
  /** Bootstrap resamples per run. */
  resamples: number;
  /** Values drawn per resample at the most (bootstrap.ts). */
  maxDraws: number;
  /** In percent: how often two runs of the same code show no change beyond the noise at all. */
  confidence: number;
  /** A change below this share of the before value is within the noise, whatever its interval: 0.05 is 5%. */
  minEffect: number;
  /** Fewer requests than this on either side: not judged. */
  minRequests: number;
}

/**
 * 15% minimum effect: the same build recorded twice side by side on a shared 2-core machine
 * differed per endpoint by up to 13% in CPU per request (where the scheduler put each process,
 * V8's optimisation decisions), one run after the other by as much (docs/diff.md). 99: a CI gate that cries
 * wolf once in a hundred runs of unchanged code, not once in twenty per metric.
 */
export const DEFAULT_NOISE: NoiseRule = { resamples: 1000, maxDraws: 4000, confidence: 99, minEffect: 0.15, minRequests: 20 };

export interface MetricChange {
  /** Nanoseconds. */
  before: number;
  after: number;
  change: number;
  /** change / before; null when before is 0. */
  relativeChange: number | null;
  /** Where the change plausibly lies, nanoseconds; null when not judged (too few requests). */
  interval: Interval | null;
  beyondNoise: boolean;
}

/** Standard errors each side of a change its interval spans, when `comparisons` changes are judged at once. */
export function zFor(confidence: number, comparisons: number): number {
  return normalQuantile(1 - (1 - confidence / 100) / (2 * Math.max(1, comparisons)));
}

/** Whether a change of `relativeChange` with `interval` counts as beyond the noise. */
export function isBeyondNoise(interval: Interval, relativeChange: number | null, minEffect: number): boolean {
  const excludesZero = interval.low > 0 || interval.high < 0;
  // From 0 to more is as large a change as there is.
  return excludesZero && (relativeChange === null || Math.abs(relativeChange) >= minEffect);
}

/**
 * `key` names the endpoint and metric: each has its own seeded resampling. Both sides need values.
 * `z` undefined: not judged (too few requests). `inFlight`: the endpoint's requests in flight at
 * once on average, the larger of the two runs' (request-values.ts).
 */
export function metricChange(
  before: readonly number[],
  after: readonly number[],
  metric: MetricName,
  key: string,
  noise: NoiseRule,
  z: number | undefined,
  inFlight = 1,
): MetricChange {
  const statistic = STATISTIC[metric];
  const a = statisticOf(before, statistic);
  const b = statisticOf(after, statistic);
  const change = b - a;
  const relativeChange = a === 0 ? null : change / a;
  if (z === undefined) return { before: a, after: b, change, relativeChange, interval: null, beyondNoise: false };
  const together = WAITED_TOGETHER.has(metric) ? Math.max(1, inFlight) : 1;
  const error = differenceError(before, after, statistic, { ...noise, seed: seedOf(`${key}\0${metric}`) }) * Math.sqrt(together);
  const interval = { low: change - z * error, high: change + z * error };
  const beyond =
    isBeyondNoise(interval, relativeChange, noise.minEffect) && (statistic.kind === 'mean' || sharesDiffer(before, after, statistic.p, together, z));
  return { before: a, after: b, change, relativeChange, interval, beyondNoise: beyond };
}

/**
 * Whether the share of requests slower than the two runs' pooled p-th percentile differs between
 * them by more than z standard errors of a difference of proportions, each request counting
 * `together` times less (requests in flight at once share their fate).
 */
function sharesDiffer(before: readonly number[], after: readonly number[], p: number, together: number, z: number): boolean {
  const threshold = statisticOf([...before, ...after], { kind: 'percentile', p });
  const slower = (values: readonly number[]) => values.reduce((n, value) => (value > threshold ? n + 1 : n), 0);
  const shareBefore = slower(before) / before.length;
  const shareAfter = slower(after) / after.length;
  const pooled = (shareBefore * before.length + shareAfter * after.length) / (before.length + after.length);
  const error = Math.sqrt(together * pooled * (1 - pooled) * (1 / before.length + 1 / after.length));
  return Math.abs(shareAfter - shareBefore) > z * error;
}
