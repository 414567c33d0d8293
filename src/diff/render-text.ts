/**
 * `pyro-run diff` on a terminal: per endpoint its metrics before and after with the change, its
 * interval and a `*` where it is beyond the noise, then the functions that changed most; the
 * endpoints only one run has; a footnote that says how the noise was judged. Pure: the diff in,
 * text out.
 */
import { formatCount, formatDuration, truncate } from '../report/format.js';
import { alignRows } from '../report/summary.js';
import { printable } from '../util/printable.js';
import type { EndpointDiff, RunDiff, RunRef } from './compare-runs.js';
import type { FunctionDelta, FunctionRef } from './function-deltas.js';
import { METRICS, type MetricName, type NoiseRule } from './metric-change.js';
import type { Breach } from './rules.js';

export const METRIC_TITLES: Record<MetricName, string> = {
  cpuPerRequest: 'CPU per request',
  wallPerRequest: 'wall per request',
  p50: 'p50 latency',
  p95: 'p95 latency',
};

const NAME_WIDTH = 60;
const BEYOND = '*';

/** Nanoseconds with their sign: `+570µs`, `-1.20ms`; `0` for what would print as none (under half a µs). */
export function formatChange(ns: number): string {
  if (Math.abs(ns) < 500) return '0';
  return `${ns > 0 ? '+' : '-'}${formatDuration(Math.abs(ns))}`;
}

/** A ratio as a signed percentage: `+19%`, `-4.6%` (a decimal below 10%), `0%` for what rounds to none; `new` from 0. */
export function formatRelative(ratio: number | null): string {
  if (ratio === null) return 'new';
  const percent = ratio * 100;
  if (Math.abs(percent) < 0.05) return '0%';
  const digits = Math.abs(percent) < 10 ? percent.toFixed(1) : String(Math.round(percent));
  return `${percent > 0 ? '+' : ''}${digits}%`;
}

const plural = (n: number, word: string) => `${formatCount(n)} ${word}${n === 1 ? '' : 's'}`;
const endpointName = (name: string) => truncate(printable(name) || '(unnamed)', NAME_WIDTH);

function runLine(label: string, run: RunRef): string {
  return `${label} ${run.dir} (${printable(run.service) || 'unnamed service'}, ${plural(run.requests, 'request')})`;
}

function verdict(endpoint: EndpointDiff, noise: NoiseRule): string {
  if (!endpoint.judged) return `not judged: fewer than ${noise.minRequests} requests in a run`;
  return endpoint.beyondNoise ? 'beyond the noise' : 'within the noise';
}

/** `file.js:12`: where a function is, as a reader recognises it (the report's caller form). */
function where(ref: FunctionRef): string {
  const file = ref.file.slice(Math.max(ref.file.lastIndexOf('/'), ref.file.lastIndexOf('\\')) + 1);
  if (file === '') return '';
  return ref.line > 0 ? `${file}:${ref.line}` : file;
}

/**
 * `priceCart (server.mjs:30)`, or for a leaf outside the app's code `writev ← handler (server.mjs:60)`;
 * an anonymous function's name says where it is already (`<anonymous> server.mjs:60`).
 */
export function functionText(delta: FunctionDelta): string {
  const place = where(delta.caller ?? delta.function);
  const name = delta.caller === undefined ? printable(delta.function.name) : `${printable(delta.function.name)} ← ${printable(delta.caller.name)}`;
  return truncate(place === '' || name.endsWith(place) ? name : `${name} (${place})`, NAME_WIDTH + 20);
}

function functionLines(functions: readonly FunctionDelta[]): string[] {
  if (functions.length === 0) return [];
  const rows = functions.map((delta) => [
    `    ${functionText(delta)}`,
    formatDuration(delta.before),
    formatDuration(delta.after),
    formatChange(delta.change),
    formatRelative(delta.relativeChange),
  ]);
  return ['  Self CPU per request of the functions that changed most (the app’s first):', ...alignRows(rows, [false, true, true, true, true])];
}

/** The rules' reasons, one line each: what broke, by how much, which rule. */
export function breachText(breach: Breach): string {
  const change = `${formatChange(breach.change)}, ${formatRelative(breach.relativeChange)}`;
  return `${printable(breach.endpoint)}: ${METRIC_TITLES[breach.metric]} ${formatDuration(breach.before)} → ${formatDuration(breach.after)} (${change}) breaks ${breach.rule}`;
}

/** How the noise was judged, for the end of the output (docs/diff.md says the same at length). */
export function noiseFootnote(noise: RunDiff['noise']): string[] {
  const minimum = `${Math.round(noise.minEffect * 1000) / 10}%`;
  return [
    `${BEYOND} beyond the noise: the change's interval excludes 0 and the change is at least ${minimum} of the before value (--min-effect).`,
    `  Interval: the change ± ${noise.z.toFixed(2)} standard errors, from a bootstrap over requests (each run's per-request values resampled`,
    `  ${formatCount(noise.resamples)} times, seeded: the same runs always get the same verdict). ${noise.z.toFixed(2)} is wide enough for all ${plural(noise.comparisons, 'change')} judged at once:`,
    `  two runs of the same code show none beyond the noise ${noise.confidence} times in 100. This covers how one run's requests vary, the`,
    `  profiler's sampling included; not a machine slower during one whole run than the other, which the ${minimum} minimum is for.`,
    '  Latencies: the interval widened by √(requests in flight at once), and the share of requests slower than the pooled percentile must',
    '  differ too (docs/diff.md, How the noise is judged).',
    `  Not judged: endpoints with fewer than ${noise.minRequests} requests in a run, and function changes (they show what an endpoint's change`,
    '  is made of). CPU and wall per request: the samples labelled with a request over every request counted (none counts 0).',
  ];
}

/** The whole terminal output, ending with a newline. */
export function formatDiff(diff: RunDiff): string {
  const lines = [runLine('Before:', diff.before), runLine('After: ', diff.after), ''];
  const both = diff.endpoints.filter((endpoint) => endpoint.presence === 'both');
  // One table for every endpoint's metrics, so columns line up down the page; the endpoints' own
  // lines and their functions go between its rows.
  const header = ['', 'before', 'after', 'change', '', '', 'interval of the change'];
  const metricRows = both.map((endpoint) =>
    METRICS.flatMap((metric) => {
      const change = endpoint.metrics[metric];
      if (change === undefined) return [];
      const interval = change.interval === null ? '' : `[${formatChange(change.interval.low)}, ${formatChange(change.interval.high)}]`;
      return [
        [
          `  ${METRIC_TITLES[metric]}`,
          formatDuration(change.before),
          formatDuration(change.after),
          formatChange(change.change),
          formatRelative(change.relativeChange),
          change.beyondNoise ? BEYOND : '',
          interval,
        ],
      ];
    }),
  );
  const aligned = alignRows([header, ...metricRows.flat()], [false, true, true, true, true, false, false]);
  if (both.length > 0) lines.push(aligned[0] as string);
  let next = 1;
  both.forEach((endpoint, e) => {
    const { before, after } = endpoint.requests;
    lines.push(`${endpointName(endpoint.name)} — ${formatCount(before)} → ${plural(after, 'request')}, ${verdict(endpoint, diff.noise)}`);
    const count = (metricRows[e] as string[][]).length;
    lines.push(...aligned.slice(next, (next += count)));
    lines.push(...functionLines(endpoint.functions));
  });
  if (both.length === 0) lines.push('No endpoint is in both runs.');
  for (const presence of ['added', 'removed'] as const) {
    const only = diff.endpoints.filter((endpoint) => endpoint.presence === presence);
    if (only.length === 0) continue;
    const title = presence === 'added' ? 'Added (only in the after run)' : 'Removed (only in the before run)';
    lines.push(
      '',
      `${title}:`,
      ...only.map((endpoint) => `  ${endpointName(endpoint.name)} — ${plural(Math.max(endpoint.requests.before, endpoint.requests.after), 'request')}`),
    );
  }
  const beyond = both.filter((endpoint) => endpoint.beyondNoise).length;
  const changed = beyond === 0 ? `None of the ${plural(both.length, 'endpoint')}` : `${formatCount(beyond)} of the ${plural(both.length, 'endpoint')}`;
  lines.push('', `${changed} in both runs changed beyond the noise.`, ...noiseFootnote(diff.noise));
  return `${lines.join('\n')}\n`;
}
