/**
 * The diff's endpoints table, as `pyro-run diff` prints it: per endpoint its requests, its verdict,
 * and each metric before → after with its change, its interval and whether it is beyond the
 * noise; the footnote that says how the noise was judged. A row, clicked or activated from the
 * keyboard, shows its diff flame graph.
 */
import type { EndpointDiff } from '../../../diff/compare-runs.js';
import type { MetricChange } from '../../../diff/metric-change.js';
import { METRICS } from '../../../diff/metric-change.js';
import { formatChange, formatRelative, noiseFootnote } from '../../../diff/render-text.js';
import { formatCount, formatDuration } from '../../format.js';
import { byTestId, el, onActivate } from '../dom.js';
import { data } from './data.js';

function verdict(endpoint: EndpointDiff): string {
  if (endpoint.presence === 'added') return 'added (after only)';
  if (endpoint.presence === 'removed') return 'removed (before only)';
  if (!endpoint.judged) return `not judged (under ${data.noise.minRequests} requests)`;
  return endpoint.beyondNoise ? 'beyond the noise' : 'within the noise';
}

function metricCell(metric: string, change: MetricChange | undefined): HTMLTableCellElement {
  if (change === undefined) return el('td', { class: 'num metric', 'data-metric': metric }, '-');
  const direction = change.change > 0 ? 'slower' : change.change < 0 ? 'faster' : 'same';
  const interval = change.interval === null ? 'not judged' : `[${formatChange(change.interval.low)}, ${formatChange(change.interval.high)}]`;
  return el(
    'td',
    { class: 'num metric', 'data-metric': metric, 'data-beyond': String(change.beyondNoise), 'data-change': change.change },
    el('div', {}, `${formatDuration(change.before)} → ${formatDuration(change.after)}`),
    el(
      'div',
      { class: change.beyondNoise ? `change beyond ${direction}` : 'change' },
      `${formatChange(change.change)} ${formatRelative(change.relativeChange)}${change.beyondNoise ? ' *' : ''}`,
    ),
    el('div', { class: 'interval' }, interval),
  );
}

/** Marks the row of the view shown (-1, the process: none). */
export function markRow(view: number): void {
  for (const row of document.querySelectorAll('[data-testid="diff-endpoint-row"]'))
    row.setAttribute('aria-selected', String(row.getAttribute('data-index') === String(view)));
}

export function renderEndpoints(select: (view: number) => void): void {
  const body = byTestId('diff-endpoints').querySelector('tbody')!;
  if (data.endpoints.length === 0) body.append(el('tr', { class: 'empty-row' }, el('td', { colspan: 3 + METRICS.length }, 'Neither run holds an endpoint.')));
  data.endpoints.forEach((endpoint, index) => {
    const row = el(
      'tr',
      {
        'data-testid': 'diff-endpoint-row',
        'data-index': index,
        'data-name': endpoint.name,
        'data-presence': endpoint.presence,
        'data-beyond': String(endpoint.beyondNoise),
        tabindex: 0,
        'aria-selected': 'false',
      },
      el('td', { class: 'name', title: endpoint.name }, endpoint.name || '(unnamed)'),
      el('td', { class: 'num' }, `${formatCount(endpoint.requests.before)} → ${formatCount(endpoint.requests.after)}`),
      el('td', { class: endpoint.beyondNoise ? 'verdict beyond' : 'verdict' }, verdict(endpoint)),
      ...METRICS.map((metric) => metricCell(metric, endpoint.metrics[metric])),
    );
    onActivate(row, () => select(index));
    body.append(row);
  });
  byTestId('diff-noise').textContent = noiseFootnote(data.noise).join('\n');
}
