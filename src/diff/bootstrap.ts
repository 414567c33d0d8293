/**
 * How much a statistic of one run's requests (a mean, a percentile) could differ from another's by
 * chance alone, estimated as a statistician would with one run on each side: a bootstrap over
 * requests. Each run's per-request values are resampled with replacement, the statistic taken of
 * each resample, and the spread of the differences after − before is the standard error of the
 * difference. The interval is the difference ± z standard errors, z chosen by the caller (wide
 * enough for every comparison a diff makes at once: metric-change.ts). Seeded: the same two runs
 * give the same interval every time, so a CI job that is re-run cannot flip its verdict. Pure.
 */
import { percentile } from '../util/duration-histogram.js';

/** What is compared of each run's per-request values. */
export type Statistic = { kind: 'mean' } | { kind: 'percentile'; p: number };

export interface BootstrapOptions {
  /** Resamples per run: the standard error is read from this many differences. */
  resamples: number;
  /**
   * Values drawn per resample at the most. A run with more requests is resampled `maxDraws` at a
   * time and each resample's distance from the whole run's statistic is shrunk by
   * √(maxDraws / requests): the spread a full-size resample would have (both a mean's and a
   * percentile's spread fall as 1/√n), at a cost that does not grow with the run.
   */
  maxDraws: number;
  seed: number;
}

export interface Interval {
  low: number;
  high: number;
}

/** mulberry32: small and fast, and plenty for resampling; the same seed gives the same sequence. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** FNV-1a of `text`: a seed per endpoint and metric, so a verdict does not depend on what else was compared first. */
export function seedOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

const ascending = (values: readonly number[]): number[] => [...values].sort((a, b) => a - b);
const meanOf = (values: ArrayLike<number>): number => {
  let total = 0;
  for (let i = 0; i < values.length; i++) total += values[i] as number;
  return total / values.length;
};

/** The statistic of all of `values` (in any order); a percentile by the nearest rank, as the report reads latencies. */
export function statisticOf(values: readonly number[], statistic: Statistic): number {
  if (values.length === 0) throw new RangeError('no values');
  return statistic.kind === 'mean' ? meanOf(values) : percentile(ascending(values), statistic.p);
}

/**
 * `resamples` bootstrap values of the statistic for one run. A percentile's resample needs no
 * values sorted: the values are sorted once, and the k-th smallest index drawn is the k-th smallest
 * value.
 */
function resampled(values: readonly number[], statistic: Statistic, options: BootstrapOptions, random: () => number): Float64Array {
  const n = values.length;
  const sorted = statistic.kind === 'mean' ? values : ascending(values);
  const point = statistic.kind === 'mean' ? meanOf(values) : percentile(sorted, statistic.p);
  const draws = Math.min(n, options.maxDraws);
  const shrink = Math.sqrt(draws / n);
  const rank = statistic.kind === 'mean' ? 0 : Math.max(1, Math.ceil((statistic.p / 100) * draws));
  const picked = new Uint32Array(draws);
  const out = new Float64Array(options.resamples);
  for (let r = 0; r < options.resamples; r++) {
    let value: number;
    if (statistic.kind === 'mean') {
      let total = 0;
      for (let i = 0; i < draws; i++) total += sorted[Math.floor(random() * n)] as number;
      value = total / draws;
    } else {
      for (let i = 0; i < draws; i++) picked[i] = Math.floor(random() * n);
      picked.sort();
      value = sorted[picked[rank - 1] as number] as number;
    }
    out[r] = point + (value - point) * shrink;
  }
  return out;
}

/** The bootstrap standard error of statistic(after) − statistic(before). Both runs need at least one value. */
export function differenceError(before: readonly number[], after: readonly number[], statistic: Statistic, options: BootstrapOptions): number {
  if (before.length === 0 || after.length === 0) throw new RangeError('a run without values has no standard error');
  const random = seededRandom(options.seed);
  const a = resampled(before, statistic, options, random);
  const b = resampled(after, statistic, options, random);
  const differences = b.map((value, r) => value - (a[r] as number));
  const mean = meanOf(differences);
  let squares = 0;
  for (const d of differences) squares += (d - mean) ** 2;
  return Math.sqrt(squares / Math.max(1, differences.length - 1));
}

/**
 * The standard normal quantile: z with P(Z ≤ z) = p, for 0 < p < 1 (Acklam's rational
 * approximation, relative error below 1.2e-9; ample for an interval's width).
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile(${p}): p must be in (0, 1)`);
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const [a0, a1, a2, a3, a4, a5] = a as [number, number, number, number, number, number];
  const [b0, b1, b2, b3, b4] = b as [number, number, number, number, number];
  const [c0, c1, c2, c3, c4, c5] = c as [number, number, number, number, number, number];
  const [d0, d1, d2, d3] = d as [number, number, number, number];
  const low = 0.02425;
  const tail = (q: number) => (((((c0 * q + c1) * q + c2) * q + c3) * q + c4) * q + c5) / ((((d0 * q + d1) * q + d2) * q + d3) * q + 1);
  if (p < low) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - low) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return ((((((a0 * r + a1) * r + a2) * r + a3) * r + a4) * r + a5) * q) / (((((b0 * r + b1) * r + b2) * r + b3) * r + b4) * r + 1);
}
