/** The endpoints and slowest-spans tables; a row, clicked or activated from the keyboard, shows its flame graph. */
import { formatCount, formatDuration, formatPercent, formatTime } from '../format.js';
import { data } from './data.js';
import { byTestId, el, numCell, onActivate } from './dom.js';
import { selfName } from './frames.js';
import { selectView } from './select.js';
import type { View } from './state.js';

/** Both tables' width in columns, for the row that says they are empty. */
const COLUMNS = 8;

/** A table row's cells, the data-* attributes that name its item, and the view it selects. */
interface Row {
  attributes: Record<string, string | number>;
  cells: HTMLTableCellElement[];
  view: View;
}

/** The table's rows (data-testid `rowTestId`), one per item, or one row saying `none`. */
function fillTable<T>(tableTestId: string, rowTestId: string, items: readonly T[], none: string, rowOf: (item: T, index: number) => Row): void {
  const body = byTestId(tableTestId).querySelector('tbody')!;
  if (items.length === 0) {
    body.append(el('tr', { class: 'empty-row' }, el('td', { colspan: COLUMNS }, none)));
    return;
  }
  items.forEach((item, index) => {
    const { attributes, cells, view } = rowOf(item, index);
    const row = el('tr', { 'data-testid': rowTestId, tabindex: 0, 'aria-selected': 'false', ...attributes }, ...cells);
    onActivate(row, () => selectView(view, row));
    body.append(row);
  });
}

export function renderEndpoints(): void {
  fillTable('endpoints', 'endpoint-row', data.endpoints, 'No local-root spans recorded.', (endpoint, index) => {
    const self = endpoint.topSelf.map((t) => `${selfName(t)} ${formatPercent(t.value, endpoint.cpuNs)}`).join(', ');
    return {
      attributes: { 'data-index': index, 'data-name': endpoint.name },
      cells: [
        el('td', { class: 'name', title: endpoint.name }, endpoint.name || '(unnamed)'),
        numCell(formatCount(endpoint.count)),
        numCell(formatDuration(endpoint.p50Ns)),
        numCell(formatDuration(endpoint.p95Ns)),
        numCell(formatDuration(endpoint.maxNs)),
        numCell(formatDuration(endpoint.cpuNs)),
        numCell(formatDuration(endpoint.wallNs)),
        el('td', { class: 'self', title: self }, self || '-'),
      ],
      view: { type: 'endpoint', index },
    };
  });
}

export function renderSpans(): void {
  fillTable('spans', 'span-row', data.slowest, 'No spans recorded.', (span, index) => {
    const endpoint = data.endpoints[span.endpoint];
    return {
      attributes: { 'data-index': index, 'data-span-id': span.spanId, 'data-name': span.name },
      cells: [
        el('td', { class: 'name', title: span.name }, span.name || '(unnamed)'),
        el('td', { class: 'name' }, endpoint ? endpoint.name : ''),
        numCell(formatDuration(span.durationNs)),
        numCell(formatDuration(span.cpuNs)),
        numCell(formatDuration(span.wallNs)),
        numCell(span.statusCode == null ? '' : String(span.statusCode)),
        el('td', {}, formatTime(span.startMs)),
        el('td', { class: 'trace' }, span.traceId),
      ],
      view: { type: 'span', index },
    };
  });
}
