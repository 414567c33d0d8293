/**
 * The event-loop blocks (docs/event-loop-blocks.md): longest first, each with the span (endpoint)
 * it is charged to, where in the app's code its heaviest stack was, and when; a row, clicked or
 * activated from the keyboard, shows the flame graph of that block's own samples. Hidden when the
 * recording did not watch blocks.
 */
import { blockedByText, chargedTo } from '../blocked-by.js';
import { formatCount, formatDuration, formatPercent, formatTime } from '../format.js';
import { data } from './data.js';
import { byTestId, el, numCell, onActivate } from './dom.js';
import { frameName, frameWhere } from './frames.js';
import { selectView } from './select.js';

/** The table's width in columns, for the row that says it is empty. */
const COLUMNS = 6;

export function renderBlocks(): void {
  const blocks = data.blocks;
  if (!blocks) return;
  byTestId('blocks-section').hidden = false;
  const kept = blocks.list.length < blocks.count ? `; the ${formatCount(blocks.list.length)} longest kept` : '';
  byTestId('blocks-meta').textContent =
    `(${formatCount(blocks.count)} stall${blocks.count === 1 ? '' : 's'} of the main thread's event loop of ${formatDuration(blocks.thresholdMs * 1e6)} or longer${kept}; longest first; select one for the flame graph of its samples)`;
  if (blocks.list.length > 0) byTestId('blocked-by').textContent = `Blocked by: ${blockedByText(blocks.list)}`;
  const body = byTestId('blocks').querySelector('tbody')!;
  if (blocks.list.length === 0) {
    body.append(el('tr', { class: 'empty-row' }, el('td', { colspan: COLUMNS }, 'No stall of the event loop reached the threshold.')));
    return;
  }
  blocks.list.forEach((block, index) => {
    const name = chargedTo(block);
    const where = block.where < 0 ? '' : frameName(block.where);
    const row = el(
      'tr',
      { 'data-testid': 'block-row', tabindex: 0, 'aria-selected': 'false', 'data-index': index, 'data-name': block.name, 'data-span-id': block.spanId },
      numCell(formatDuration(block.durationMs * 1e6)),
      el('td', { class: 'name', title: name }, name),
      el('td', { class: 'name', title: block.where < 0 ? '' : frameWhere(block.where) }, where || '-'),
      numCell(block.samples > 0 ? `${formatPercent(block.spanSamples, block.samples)} of ${formatCount(block.samples)}` : 'none'),
      el('td', {}, formatTime(block.startMs)),
      el('td', { class: 'trace' }, block.traceId ?? ''),
    );
    onActivate(row, () => selectView({ type: 'block', index }, row));
    body.append(row);
  });
}
