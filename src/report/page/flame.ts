/**
 * The report's flame graph: the tree of the page's state (view, type, thread) drawn by
 * flame-draw.ts, coloured by whose code each frame is. Frames carry data-* values (node, name,
 * total, self, depth) the page reads back, and tests too. Searching highlights the drawn frames
 * that match and sums the matched value.
 */
import type { FlameTree } from '../aggregate.js';
import { formatPercent } from '../format.js';
import { formatValue, isPerSpan, kindLabel } from './data.js';
import { byTestId, el } from './dom.js';
import { drawFlame } from './flame-draw.js';
import { layout } from './flame-layout.js';
import { frameFile, frameName, frameWhere } from './frames.js';
import { state } from './state.js';
import { currentTree, threadName, threadSuffix, viewTitle } from './view.js';
import type { ProfileKind } from '../load-run.js';

/** Warm hues for the app's code, cool for Node internals and dependencies, grey for V8's pseudo-frames. */
function colorOf(f: number): string {
  if (f < 0) return 'hsl(220, 12%, 82%)';
  const name = frameName(f);
  const file = frameFile(f);
  if (!file && /^\(.*\)$/.test(name)) return 'hsl(220, 8%, 76%)';
  let hash = 0;
  for (let i = 0; i < name.length; i++) hash = (hash * 31 + name.charCodeAt(i)) >>> 0;
  if (file.startsWith('node:') || /[\\/]node_modules[\\/]/.test(file)) return `hsl(${190 + (hash % 40)}, 55%, 74%)`;
  return `hsl(${5 + (hash % 45)}, 82%, ${58 + (hash % 12)}%)`;
}

/** The type toggle's buttons, each with its type in data-kind. */
export const typeButtons = (): NodeListOf<HTMLButtonElement> => document.querySelectorAll<HTMLButtonElement>('[data-testid="type-toggle"] button');

export const buttonKind = (button: HTMLButtonElement): ProfileKind => button.dataset.kind as ProfileKind;

export function renderFlame(): void {
  const box = byTestId('flame-graph');
  const tree = currentTree();
  byTestId('flame-title').textContent = `${viewTitle()} · ${kindLabel(state.kind)}${threadSuffix()}`;
  box.replaceChildren();
  box.dataset.kind = state.kind;
  box.dataset.view = state.view.type;
  box.dataset.thread = state.thread < 0 ? 'all' : threadName();
  for (const button of typeButtons()) {
    button.setAttribute('aria-pressed', String(buttonKind(button) === state.kind));
    button.disabled = state.view.type !== 'process' && !isPerSpan(buttonKind(button));
  }
  byTestId<HTMLButtonElement>('view-process').disabled = state.view.type === 'process';
  if (tree.total[0]! <= 0) {
    box.style.height = '';
    delete box.dataset.zoomRoot;
    box.append(
      el(
        'div',
        { class: 'flame-empty', 'data-testid': 'flame-empty' },
        `No ${kindLabel(state.kind)} samples in this view${state.thread < 0 ? '' : ` on the ${threadName()} thread`}.`,
      ),
    );
    byTestId<HTMLButtonElement>('flame-reset').disabled = true;
    applySearch();
    return;
  }
  const zoom = drawFlame(box, tree, state.zoom, { name: (node) => frameName(tree.frame[node]!), colour: (node) => colorOf(tree.frame[node]!) });
  byTestId<HTMLButtonElement>('flame-reset').disabled = zoom === 0;
  applySearch();
}

function matches(tree: FlameTree, node: number, term: string): boolean {
  const f = tree.frame[node]!;
  return f >= 0 && (frameName(f).toLowerCase().includes(term) || frameWhere(f).toLowerCase().includes(term));
}

/** Highlights drawn frames matching the search and sums the matched time (outermost matches only, so nothing counts twice). */
export function applySearch(): void {
  const box = byTestId('flame-graph');
  const term = state.search.trim().toLowerCase();
  const info = byTestId('flame-matches');
  box.classList.toggle('searching', term !== '');
  const tree = currentTree();
  for (const frame of box.querySelectorAll<HTMLElement>('.frame')) {
    const hit = term !== '' && matches(tree, Number(frame.dataset.node), term);
    frame.classList.toggle('match', hit);
    if (hit) frame.dataset.match = 'true';
    else delete frame.dataset.match;
  }
  if (term === '' || tree.total[0]! <= 0) {
    info.textContent = '';
    return;
  }
  const { end } = layout(tree);
  const zoom = state.zoom < tree.frame.length ? state.zoom : 0;
  let matched = 0;
  for (let i = zoom; i < end[zoom]!; ) {
    if (matches(tree, i, term)) {
      matched += tree.total[i]!;
      i = end[i]!;
    } else i++;
  }
  info.textContent = matched > 0 ? `Matched ${formatValue(state.kind, matched)} (${formatPercent(matched, tree.total[zoom]!)} of this view)` : 'No match';
}

/** The details of tree node `node` for the tooltip: where it is, its total and self value. */
export function describeFrame(node: number): HTMLElement[] {
  const tree = currentTree();
  const f = tree.frame[node]!;
  const whole = tree.total[0]!;
  return [
    el('div', { class: 'tip-name' }, frameName(f)),
    el('div', { class: 'tip-file' }, frameWhere(f) || (f < 0 ? viewTitle() : 'no source location')),
    el('div', {}, `Total: ${formatValue(state.kind, tree.total[node]!)} (${formatPercent(tree.total[node]!, whole)})`),
    el('div', {}, `Self: ${formatValue(state.kind, tree.self[node]!)} (${formatPercent(tree.self[node]!, whole)})`),
  ];
}
