/** The diff flame graph's controls: the CPU/wall toggle, the views (an endpoint's row, the whole process), and the pointer's (flame-pointer.ts). */
import { byTestId, el } from '../dom.js';
import { bindFlamePointer } from '../flame-pointer.js';
import { KIND_TITLES, KINDS } from './data.js';
import { markRow } from './endpoints.js';
import { describeFrame, renderFlame } from './flame.js';
import { state } from './state.js';

/** Shows view `view` (an endpoint's index, -1 the process) from the top. */
export function selectView(view: number): void {
  state.view = view;
  state.zoom = 0;
  markRow(view);
  renderFlame();
}

export function bindFlame(): void {
  const toggle = byTestId('type-toggle');
  for (const kind of KINDS) {
    const button = el('button', { type: 'button', 'data-kind': kind, 'data-testid': `type-${kind}`, 'aria-pressed': 'false' }, KIND_TITLES[kind]);
    button.addEventListener('click', () => {
      if (state.kind === kind) return;
      state.kind = kind;
      // Node indices differ between the trees of two types, so a zoom does not carry over.
      state.zoom = 0;
      renderFlame();
    });
    toggle.append(button);
  }
  bindFlamePointer({ state, describe: describeFrame, redraw: renderFlame });
  byTestId('view-process').addEventListener('click', () => selectView(-1));
}
