/**
 * Durations counted in log-scale buckets, 16 per doubling: bucket `b` holds durations in
 * (2^((b-1)/16), 2^(b/16)] nanoseconds, so a percentile read from the buckets (its bucket's upper
 * bound, never above the largest duration seen) is at most 4.4% (2^(1/16)) above the exact one,
 * whatever the count. Written by the local recorder for every local root and read by the report:
 * one definition serves both. Stored sparse, bucket → count.
 */
export const BUCKETS_PER_DOUBLING = 16;

export type Histogram = Record<string, number>;

/** The bucket a duration falls in; durations of 1 ns and less share bucket 0. */
export function bucketOf(durationNs: number): number {
  return durationNs <= 1 ? 0 : Math.ceil(Math.log2(durationNs) * BUCKETS_PER_DOUBLING);
}

export const bucketUpperNs = (bucket: number): number => 2 ** (bucket / BUCKETS_PER_DOUBLING);

export function addDuration(histogram: Histogram, durationNs: number): void {
  const bucket = bucketOf(durationNs);
  histogram[bucket] = (histogram[bucket] ?? 0) + 1;
}

/** The nearest rank of percentile `p` (0–100) among `count` values, from 1. */
const rankOf = (p: number, count: number): number => Math.max(1, Math.ceil((p / 100) * count));

/** Nearest-rank percentile `p` (0–100) of ascending values, exactly (the rule percentileNs reads the buckets by); 0 when there are none. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? 0 : (sorted[rankOf(p, sorted.length) - 1] as number);
}

/**
 * Nearest-rank percentile `p` (0–100) of the durations counted, as its bucket's upper bound capped
 * at `maxNs`; 0 when nothing was counted.
 */
export function percentileNs(histogram: Histogram, p: number, maxNs: number): number {
  const buckets = Object.keys(histogram)
    .map(Number)
    .sort((a, b) => a - b);
  const count = buckets.reduce((sum, bucket) => sum + (histogram[bucket] as number), 0);
  if (count === 0) return 0;
  const rank = rankOf(p, count);
  let seen = 0;
  for (const bucket of buckets) {
    seen += histogram[bucket] as number;
    if (seen >= rank) return Math.min(bucketUpperNs(bucket), maxNs);
  }
  return maxNs;
}
