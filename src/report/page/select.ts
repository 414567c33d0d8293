/** Picking what the flame graph shows: a table row, a waterfall, the whole process. */
import { isPerSpan, shownKinds } from './data.js';
import { renderFlame } from './flame.js';
import { state, type View } from './state.js';
import { renderWaits } from './waits-section.js';

function selectRow(row: HTMLElement | null): void {
  for (const selected of document.querySelectorAll('tbody tr[aria-selected="true"]')) selected.setAttribute('aria-selected', 'false');
  if (row) row.setAttribute('aria-selected', 'true');
}

/** Shows `view` (and, for an endpoint, its waits); `row`: the table row picked, if one was. */
export function selectView(view: View, row: HTMLElement | null): void {
  state.view = view;
  if (view.type === 'endpoint') renderWaits(view.index, selectView);
  // A profile without spans (memory in use) has only the whole-process view.
  if (view.type !== 'process' && !isPerSpan(state.kind)) state.kind = shownKinds.find(isPerSpan) || 'cpu';
  state.zoom = 0;
  selectRow(row);
  renderFlame();
}
