// Order statistics over small samples (a handful of rounds): medians resist the odd slow round
// better than means, and min–max shows the spread the reader should discount the median by.

const sorted = (values) => [...values].filter((v) => Number.isFinite(v)).sort((a, b) => a - b);

/** Linear-interpolated percentile, p in [0, 100]; NaN for no values. */
export function percentile(values, p) {
  const s = sorted(values);
  if (s.length === 0) return Number.NaN;
  const rank = (p / 100) * (s.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return s[lo] + (s[hi] - s[lo]) * (rank - lo);
}

export const median = (values) => percentile(values, 50);
export const min = (values) => sorted(values)[0] ?? Number.NaN;
export const max = (values) => sorted(values).at(-1) ?? Number.NaN;
/** The arithmetic mean, for readings of one quantity over time (not for rounds); NaN for none. */
export const mean = (values) => {
  const finite = values.filter((v) => Number.isFinite(v));
  return finite.length === 0 ? Number.NaN : finite.reduce((a, b) => a + b, 0) / finite.length;
};

/** The summary every table row shows. */
export function summary(values) {
  return { median: median(values), min: min(values), max: max(values), n: values.length, values };
}

/** a / b, NaN when b is 0 or missing. */
export const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : Number.NaN);
