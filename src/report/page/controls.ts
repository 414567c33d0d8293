/** The flame graph's controls: the type toggle, the thread picker, zoom by click, search, hover details, redraw on resize. */
import { data, kindLabel, shownKinds } from './data.js';
import { byTestId, el } from './dom.js';
import { applySearch, buttonKind, describeFrame, renderFlame, typeButtons } from './flame.js';
import { bindFlamePointer } from './flame-pointer.js';
import { selectView } from './select.js';
import { state } from './state.js';

export function renderToggle(): void {
  const toggle = byTestId('type-toggle');
  for (const kind of shownKinds) {
    const title = kindLabel(kind);
    toggle.append(
      el(
        'button',
        { type: 'button', 'data-kind': kind, 'data-testid': `type-${kind}`, 'aria-pressed': 'false' },
        title.charAt(0).toUpperCase() + title.slice(1),
      ),
    );
  }
}

/** The thread picker, for a run with worker threads: all of them, or one. */
export function renderThreadSelect(): void {
  if (!data.threads) return;
  const select = byTestId('thread-select');
  select.append(el('option', { value: -1 }, 'All threads'), ...data.threads.map((t, i) => el('option', { value: i }, t.name)));
  select.hidden = false;
}

export function bindFlame(): void {
  bindFlamePointer({ state, describe: describeFrame, redraw: renderFlame });
  byTestId('view-process').addEventListener('click', () => selectView({ type: 'process', index: -1 }, null));
  const search = byTestId<HTMLInputElement>('flame-search');
  search.addEventListener('input', () => {
    state.search = search.value;
    applySearch();
  });
  for (const button of typeButtons()) {
    button.addEventListener('click', () => {
      if (state.kind === buttonKind(button)) return;
      state.kind = buttonKind(button);
      // Node indices differ between the trees of two types, so a zoom does not carry over.
      state.zoom = 0;
      renderFlame();
    });
  }
  const thread = byTestId<HTMLSelectElement>('thread-select');
  thread.addEventListener('change', () => {
    state.thread = Number(thread.value);
    // A thread's tree has nodes of its own, so a zoom does not carry over.
    state.zoom = 0;
    renderFlame();
  });
}
