/**
 * An endpoint's "where the time went": its mean request as a bar and a line, its CPU by whose code
 * ran, its calls with the repeated one called out, and its slowest request as a waterfall whose
 * spans open that request's flame graph.
 */
import type { Waterfall } from '../waits.js';
import { formatCount, formatDuration, formatPercent } from '../format.js';
import { waitParts } from '../wait-parts.js';
import { data } from './data.js';
import { byTestId, el, numCell, onActivate } from './dom.js';
import type { View } from './state.js';

type Select = (view: View, row: HTMLElement | null) => void;

const CATEGORY_TITLES = { database: 'database', http: 'HTTP', other: 'other call', internal: 'internal', request: 'request' };

/** Shows the waits of endpoint `index` (the section hides for an endpoint the recording holds no request of). */
export function renderWaits(index: number, select: Select): void {
  const endpoint = data.endpoints[index]!;
  const section = byTestId('waits');
  const waits = endpoint.waits;
  section.hidden = !waits;
  if (!waits) return;
  byTestId('waits-title').textContent = endpoint.name;
  byTestId('waits-requests').textContent =
    `(mean of ${formatCount(waits.requests)} request${waits.requests === 1 ? '' : 's'} kept; CPU spent inside a call counts in both)`;
  const parts = waitParts(waits).filter(({ ns }) => ns > 0);
  const whole = parts.reduce((n, { ns }) => n + ns, 0);
  byTestId('waits-bar').replaceChildren(
    ...parts.map(({ part, title, ns }) => {
      const segment = el('span', { class: `part-${part}`, 'data-part': part, title: `${title} ${formatDuration(ns)}` });
      segment.style.width = `${whole > 0 ? (ns / whole) * 100 : 0}%`;
      return segment;
    }),
  );
  const calls =
    waits.databaseCallsP50 > 0
      ? ` (${waits.databaseCallsP50} database call${waits.databaseCallsP50 === 1 ? '' : 's'} a request, at most ${waits.databaseCallsMax})`
      : '';
  byTestId('waits-text').textContent =
    `${formatDuration(waits.durationNs)} a request: ${parts.map(({ part, title, ns }) => `${title} ${formatDuration(ns)}${part === 'database' ? calls : ''}`).join(' · ')}`;
  const owners = endpoint.byOwner.filter((o) => o.value > 0);
  const cpuWhole = owners.reduce((n, o) => n + o.value, 0);
  byTestId('by-owner').textContent =
    owners.length === 0 ? '' : `CPU by whose code ran: ${owners.map((o) => `${o.owner} ${formatPercent(o.value, cpuWhole)}`).join(' · ')}`;
  const repeated = waits.repeated;
  const flag = byTestId('repeated');
  flag.hidden = !repeated;
  flag.textContent = repeated
    ? `Repeated in one request: ${repeated.text} — run up to ${repeated.perRequestMax} times in a request (p50 ${repeated.perRequestP50}); one query for all of them would save most of its ${formatDuration(repeated.totalNs / waits.requests)} a request.`
    : '';
  byTestId('calls')
    .querySelector('tbody')!
    .replaceChildren(
      ...(waits.calls.length === 0
        ? [el('tr', { class: 'empty-row' }, el('td', { colspan: 7 }, 'No calls under its requests (no CLIENT spans).'))]
        : waits.calls.map((c) =>
            el(
              'tr',
              { 'data-testid': 'call-row', 'data-category': c.category, 'data-repeated': c.repeated ? 'true' : 'false' },
              el('td', { class: 'name', title: c.text }, c.text),
              el('td', {}, CATEGORY_TITLES[c.category] + (c.repeated ? ' · repeated' : '')),
              numCell(String(c.perRequestP50)),
              numCell(String(c.perRequestMax)),
              numCell(formatCount(c.count)),
              numCell(formatDuration(c.totalNs)),
              numCell(formatDuration(c.p95Ns)),
            ),
          )),
    );
  renderWaterfall(index, waits.waterfall!, select);
}

function renderWaterfall(index: number, waterfall: Waterfall, select: Select): void {
  byTestId('waterfall-title').textContent =
    `(${formatDuration(waterfall.durationNs)}; select a span for the request's flame graph${waterfall.more > 0 ? `; ${formatCount(waterfall.more)} more spans not drawn` : ''})`;
  const whole = Math.max(waterfall.durationNs, 1);
  byTestId('waterfall').replaceChildren(
    ...waterfall.spans.map((span) => {
      const name = el('span', { class: 'wf-name', title: span.name }, span.name || '(unnamed)');
      name.style.paddingLeft = `${span.depth * 14}px`;
      const bar = el('span', { class: `wf-bar part-${span.category}` });
      bar.style.left = `${(span.offsetNs / whole) * 100}%`;
      bar.style.width = `${(span.durationNs / whole) * 100}%`;
      const row = el(
        'div',
        {
          class: 'wf-row',
          tabindex: 0,
          'data-testid': 'waterfall-span',
          'data-category': span.category,
          'data-depth': span.depth,
          title: `${CATEGORY_TITLES[span.category]} · starts at ${formatDuration(span.offsetNs)}`,
        },
        name,
        el('span', { class: 'wf-track' }, bar),
        el('span', { class: 'wf-num' }, formatDuration(span.durationNs)),
        el('span', { class: 'wf-num', title: 'CPU of the samples labelled with this span' }, span.cpuNs > 0 ? `CPU ${formatDuration(span.cpuNs)}` : ''),
      );
      onActivate(row, () => select({ type: 'request', index }, null));
      return row;
    }),
  );
}
