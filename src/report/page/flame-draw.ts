/**
 * Drawing a flame tree with the DOM, for every page that has one (the report, the diff): root on
 * top, children heaviest first, widths proportional to each node's `total`, zoomed into one node
 * whose ancestors stay on top at full width. What a frame says and how it is coloured is the
 * page's: a `FlameLook` names, colours and describes each node, so one layout and one drawing
 * serve a run's flame graph (coloured by whose code) and a diff's (coloured by the change).
 */
import type { FlameTree } from '../aggregate.js';
import { el } from './dom.js';
import { layout } from './flame-layout.js';

/** Height of a flame graph row, px (matches .frame height plus its border). */
const ROW = 20;
/** Frames narrower than this (and so everything above them) are not drawn. */
const MIN_PX = 0.5;
/** Narrower frames get no label: a letter and an ellipsis say nothing and cost layout time. */
const LABEL_MIN_PX = 18;

/** How a page shows a tree's nodes. */
export interface FlameLook {
  name(node: number): string;
  /** A CSS colour. */
  colour(node: number): string;
  /** data-* attributes beyond the common ones (node, name, total, self, depth), read back by the page and by tests. */
  attributes?(node: number): Record<string, string | number | undefined>;
}

/** `left` and `width` in percent of the graph; `pixels`: the graph's width. */
function frameElement(
  tree: FlameTree,
  node: number,
  look: FlameLook,
  place: { left: number; width: number; ancestor: boolean; pixels: number },
): HTMLDivElement {
  const name = look.name(node);
  const frame = el(
    'div',
    {
      class: place.ancestor ? 'frame ancestor' : 'frame',
      'data-testid': 'flame-frame',
      'data-node': node,
      'data-name': name,
      'data-total': tree.total[node],
      'data-self': tree.self[node],
      'data-depth': tree.depth[node],
      'data-ancestor': place.ancestor ? 'true' : undefined,
      ...look.attributes?.(node),
    },
    (place.width / 100) * place.pixels >= LABEL_MIN_PX ? name : '',
  );
  frame.style.left = `${place.left}%`;
  frame.style.width = `${place.width}%`;
  frame.style.top = `${tree.depth[node]! * ROW}px`;
  frame.style.backgroundColor = look.colour(node);
  return frame;
}

/**
 * Draws `tree` (whose root has a value) into `box`, replacing what it held, zoomed into node
 * `zoom` (the root when out of range); returns the zoom drawn. The box says its zoomed frame in
 * data-zoom-root and data-zoom-node.
 */
export function drawFlame(box: HTMLElement, tree: FlameTree, zoom: number, look: FlameLook): number {
  const { x, parent, end } = layout(tree);
  const at = zoom < tree.frame.length ? zoom : 0;
  const zoomTotal = tree.total[at]!;
  const pixels = box.clientWidth || 1000;
  const fragment = document.createDocumentFragment();
  // The zoomed frame's ancestors stay on top, full width: clicking one zooms back out to it.
  for (let a = parent[at]!; a >= 0; a = parent[a]!) fragment.append(frameElement(tree, a, look, { left: 0, width: 100, ancestor: true, pixels }));
  let maxDepth = tree.depth[at]!;
  for (let i = at; i < end[at]!; ) {
    const width = tree.total[i]! / zoomTotal;
    if (width * pixels < MIN_PX) {
      i = end[i]!;
      continue;
    }
    fragment.append(frameElement(tree, i, look, { left: ((x[i]! - x[at]!) / zoomTotal) * 100, width: width * 100, ancestor: false, pixels }));
    if (tree.depth[i]! > maxDepth) maxDepth = tree.depth[i]!;
    i++;
  }
  box.replaceChildren(fragment);
  box.style.height = `${(maxDepth + 1) * ROW}px`;
  box.dataset.zoomRoot = look.name(at);
  box.dataset.zoomNode = String(at);
  return at;
}
