/**
 * Human-readable numbers, the same in the text summary and on the report page (whose bundle
 * imports this module, so it must stay free of Node's APIs).
 */

/** Nanoseconds → `0`, `850µs`, `12.3ms`, `1.20s`, `2m05s`: three significant digits at most. */
export function formatDuration(ns: number): string {
  if (ns <= 0) return '0';
  if (ns < 1e6) return `${Math.round(ns / 1e3)}µs`;
  if (ns < 1e9) return `${trim(ns / 1e6)}ms`;
  if (ns < 60e9) return `${trim(ns / 1e9)}s`;
  const seconds = Math.round(ns / 1e9);
  return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}

/** Bytes → `0`, `512B`, `12.3KB`, `98.2MB`, `1.20GB` (powers of 1024). */
export function formatBytes(bytes: number): string {
  if (bytes <= 0) return '0';
  if (bytes < 1024) return `${Math.round(bytes)}B`;
  if (bytes < 1024 ** 2) return `${trim(bytes / 1024)}KB`;
  if (bytes < 1024 ** 3) return `${trim(bytes / 1024 ** 2)}MB`;
  return `${trim(bytes / 1024 ** 3)}GB`;
}

/** 3 significant digits, at most one decimal below 100: 1.23, 12.3, 123. */
function trim(value: number): string {
  if (value >= 100) return String(Math.round(value));
  if (value >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/** part/whole as `62%` (`<1%` for a sliver, so a non-zero share never reads as none). */
export function formatPercent(part: number, whole: number): string {
  if (whole <= 0) return '0%';
  const percent = (part / whole) * 100;
  if (percent > 0 && percent < 1) return '<1%';
  return `${Math.round(percent)}%`;
}

/** Cuts `text` to `width` characters with an ellipsis. */
export function truncate(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

/** 1666024 → `1,666,024`. */
export const formatCount = (n: number): string => Math.round(n).toLocaleString('en-US');

/** Epoch ms → `2026-11-29 22:15:04.000` (UTC: the same clock as span timestamps); `?` when not a time. */
export const formatTime = (ms: number): string => (Number.isFinite(ms) ? new Date(ms).toISOString().replace('T', ' ').replace('Z', '') : '?');
