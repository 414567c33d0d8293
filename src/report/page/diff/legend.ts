/** The colour scale, said on the page (change-colour.ts): a swatch per step, from faster to slower, then the frames only one run has. */
import { changeLook, FULL_CHANGE } from '../../../diff/change-colour.js';
import { formatRelative } from '../../../diff/render-text.js';
import { byTestId, el } from '../dom.js';
import { band } from './data.js';

function swatch(before: number, after: number, label: string): HTMLElement {
  const look = changeLook(before, after, band);
  const chip = el('span', { class: 'swatch', 'data-change': look.change });
  chip.style.backgroundColor = look.colour;
  return el('span', { class: 'legend-item', 'data-change': look.change }, chip, label);
}

export function renderLegend(): void {
  const middle = (band + FULL_CHANGE) / 2;
  byTestId('diff-legend').append(
    'Each frame by the change of its time per request (it and what it calls), after against before: ',
    swatch(1, 1 - FULL_CHANGE, `faster ${formatRelative(-FULL_CHANGE)} or more`),
    swatch(1, 1 - middle, formatRelative(-middle)),
    swatch(1, 1, `within ±${formatRelative(band).replace(/^\+/, '')}`),
    swatch(1, 1 + middle, formatRelative(middle)),
    swatch(1, 1 + FULL_CHANGE, `slower ${formatRelative(FULL_CHANGE)} or more`),
    swatch(0, 1, 'new: only in the after run'),
    swatch(1, 0, 'gone: only in the before run (drawn at its before time)'),
  );
}
