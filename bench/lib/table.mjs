// Plain-text tables: the runner prints them and docs/performance.md pastes them as they are.

/** Formats a number with `digits` decimals; NaN and undefined become "–". */
export function num(value, digits = 1) {
  return Number.isFinite(value) ? value.toFixed(digits) : '–';
}

/** "median (min–max)" of a stats summary, in the given unit and precision. */
export function spread(stat, digits = 1) {
  if (!stat || !Number.isFinite(stat.median)) return '–';
  if (stat.n === 1) return num(stat.median, digits);
  return `${num(stat.median, digits)} (${num(stat.min, digits)}–${num(stat.max, digits)})`;
}

/** "1.23×" */
export const times = (value) => (Number.isFinite(value) ? `${value.toFixed(2)}×` : '–');

/** Signed value, e.g. "+12.3". */
export const signed = (value, digits = 1) => (Number.isFinite(value) ? `${value >= 0 ? '+' : ''}${value.toFixed(digits)}` : '–');

/** Renders rows (arrays of strings) under headers as an aligned Markdown-compatible table. */
export function render(title, headers, rows) {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => String(row[i] ?? '').length)));
  const line = (cells) => `| ${cells.map((cell, i) => String(cell ?? '').padEnd(widths[i])).join(' | ')} |`;
  const rule = `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`;
  return [`${title}`, '', line(headers), rule, ...rows.map(line)].join('\n');
}
