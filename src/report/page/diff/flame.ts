/**
 * The diff flame graph: the tree of the page's view and type drawn by flame-draw.ts, as the
 * report draws its own, with each frame coloured by the change of its time per request
 * (change-colour.ts). Frames carry their per-request times (data-before, data-after), their
 * change (data-change: slower, faster, same, new, gone) and relative change (data-relative), which
 * tests read back; hovering a frame shows its numbers.
 */
import { changeLook } from '../../../diff/change-colour.js';
import { formatChange, formatRelative } from '../../../diff/render-text.js';
import type { DiffFlameTree } from '../../../diff/flame-diff.js';
import { formatCount, formatDuration } from '../../format.js';
import { byTestId, el } from '../dom.js';
import { drawFlame, type FlameLook } from '../flame-draw.js';
import { band, data, KIND_TITLES, KINDS, names, treeOf } from './data.js';
import { state } from './state.js';

export const currentTree = (): DiffFlameTree => treeOf(state.view, state.kind);

function viewTitle(): string {
  if (state.view < 0) return `Whole process — ${formatCount(data.before.requests)} → ${formatCount(data.after.requests)} requests`;
  const endpoint = data.endpoints[state.view]!;
  return `${endpoint.name} — ${formatCount(endpoint.requests.before)} → ${formatCount(endpoint.requests.after)} requests`;
}

const lookOf = (tree: DiffFlameTree, node: number) => changeLook(tree.before[node]!, tree.after[node]!, band);

function diffLook(tree: DiffFlameTree): FlameLook {
  return {
    name: (node) => names.name(tree.frame[node]!),
    colour: (node) => lookOf(tree, node).colour,
    attributes: (node) => {
      const look = lookOf(tree, node);
      return { 'data-change': look.change, 'data-relative': look.relative ?? undefined, 'data-before': tree.before[node], 'data-after': tree.after[node] };
    },
  };
}

export function renderFlame(): void {
  const box = byTestId('flame-graph');
  const tree = currentTree();
  byTestId('flame-title').textContent = `${viewTitle()} · ${KIND_TITLES[state.kind]} per request`;
  box.dataset.kind = state.kind;
  box.dataset.view = state.view < 0 ? 'process' : 'endpoint';
  for (const kind of KINDS) byTestId(`type-${kind}`).setAttribute('aria-pressed', String(kind === state.kind));
  byTestId<HTMLButtonElement>('view-process').disabled = state.view < 0;
  if (tree.total[0]! <= 0) {
    box.style.height = '';
    delete box.dataset.zoomRoot;
    box.replaceChildren(el('div', { class: 'flame-empty', 'data-testid': 'flame-empty' }, `No ${KIND_TITLES[state.kind]} samples of this view in either run.`));
    byTestId<HTMLButtonElement>('flame-reset').disabled = true;
    return;
  }
  state.zoom = drawFlame(box, tree, state.zoom, diffLook(tree));
  byTestId<HTMLButtonElement>('flame-reset').disabled = state.zoom === 0;
}

/** What the change of a frame is, in words. */
function changeWords(tree: DiffFlameTree, node: number): string {
  const look = lookOf(tree, node);
  const within = `±${formatRelative(band).replace(/^\+/, '')}`;
  if (look.change === 'new') return 'New: only in the after run.';
  if (look.change === 'gone') return 'Gone: only in the before run, drawn at its before time.';
  if (look.change === 'same') return `Within ${within} (the diff's minimum effect).`;
  return `${look.change === 'slower' ? 'Slower' : 'Faster'}: beyond ${within}.`;
}

/** A before → after line: `1.90ms → 2.37ms (+464µs, +24%)`. */
function beforeAfter(before: number, after: number): string {
  return `${formatDuration(before)} → ${formatDuration(after)} (${formatChange(after - before)}, ${formatRelative(before > 0 ? (after - before) / before : null)})`;
}

/** The numbers of tree node `node` for the tooltip: where it is, its time and self time per request before → after, what its colour means. */
export function describeFrame(node: number): HTMLElement[] {
  const tree = currentTree();
  const f = tree.frame[node]!;
  return [
    el('div', { class: 'tip-name' }, names.name(f)),
    el('div', { class: 'tip-file' }, names.where(f) || (f < 0 ? viewTitle() : 'no source location')),
    el('div', { 'data-testid': 'tip-total' }, `Per request: ${beforeAfter(tree.before[node]!, tree.after[node]!)}`),
    el('div', { 'data-testid': 'tip-self' }, `Self per request: ${beforeAfter(tree.beforeSelf[node]!, tree.afterSelf[node]!)}`),
    el('div', { 'data-testid': 'tip-change' }, changeWords(tree, node)),
  ];
}
