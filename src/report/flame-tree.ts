/**
 * Flame graph trees as flat arrays (compact to embed in a page and to print as JSON): nodes in
 * pre-order, root first, each with its frame, depth, self and total value. A node's children
 * follow it, heaviest first, so a renderer lays them out left to right in one pass.
 */
import type { SampleColumns, SampleIndex } from './sample-index.js';

export interface FlameTree {
  /** Index into the frame table; -1 for the root ("all"). */
  frame: number[];
  depth: number[];
  /** Value of samples whose leaf is this node. */
  self: number[];
  /** Value of samples whose stack passes through this node. */
  total: number[];
}

/** Sample rows to include: indices into a SampleColumns. */
export type SampleSelection = Iterable<number>;

/** All rows of `columns`. */
export function everySample(columns: SampleColumns): SampleSelection {
  return columns.stack.keys();
}

/** Merges the selected samples' stacks (root → leaf) into a tree. */
export function buildFlameTree(index: SampleIndex, columns: SampleColumns, selection: SampleSelection): FlameTree {
  const { stackParent, stackFrame } = index;
  const self = new Map<number, number>();
  for (const row of selection) {
    const node = columns.stack[row] as number;
    self.set(node, (self.get(node) ?? 0) + (columns.value[row] as number));
  }

  // Every trie node on the way to a selected leaf, then totals summed bottom-up: trie parents
  // have smaller ids than their children, so descending id order visits children first.
  const total = new Map<number, number>([[0, 0]]);
  for (const leaf of self.keys()) {
    for (let node = leaf; node > 0 && !total.has(node); node = stackParent[node] as number) total.set(node, 0);
  }
  const nodes = [...total.keys()].sort((a, b) => b - a);
  const kids = new Map<number, number[]>();
  for (const node of nodes) {
    const sum = (total.get(node) as number) + (self.get(node) ?? 0);
    total.set(node, sum);
    if (node === 0) continue;
    const parent = stackParent[node] as number;
    total.set(parent, (total.get(parent) as number) + sum);
    const siblings = kids.get(parent);
    if (siblings === undefined) kids.set(parent, [node]);
    else siblings.push(node);
  }

  const tree: FlameTree = { frame: [], depth: [], self: [], total: [] };
  const stack: { node: number; depth: number }[] = [{ node: 0, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop() as { node: number; depth: number };
    tree.frame.push(stackFrame[node] as number);
    tree.depth.push(depth);
    tree.self.push(self.get(node) ?? 0);
    tree.total.push(total.get(node) as number);
    const children = kids.get(node);
    if (children === undefined) continue;
    // Heaviest first on screen, so pushed last; equal weights keep trie order for stable output.
    children.sort((a, b) => (total.get(a) as number) - (total.get(b) as number) || b - a);
    for (const child of children) stack.push({ node: child, depth: depth + 1 });
  }
  return tree;
}
