/**
 * Flame graph trees as flat arrays (compact to embed in a page and to print as JSON): nodes in
 * pre-order, root first, each with its frame, depth, self and total value. A node's children
 * follow it, heaviest first, so a renderer lays them out left to right in one pass. A run with
 * worker threads also has each thread's values on the same nodes, so one tree serves every thread.
 */
import type { SampleColumns, SampleIndex } from './sample-index.js';

/**
 * One thread's share of a tree: the nodes it has time in, as positions in the tree's arrays in
 * ascending order (so still a pre-order: a node's ancestors have its time too), and its values
 * there. Sparse, because threads mostly run code of their own: a worker's values do not cost a
 * number for every node of the main thread's stacks, however many workers a pool went through.
 */
export interface ThreadValues {
  node: number[];
  self: number[];
  total: number[];
}

export interface FlameTree {
  /** Index into the frame table; -1 for the root ("all"). */
  frame: number[];
  depth: number[];
  /** Value of samples whose leaf is this node. */
  self: number[];
  /** Value of samples whose stack passes through this node. */
  total: number[];
  /**
   * Parallel to SampleIndex.threads, only when the run has more than one thread: each thread's
   * values on these nodes (they add up to `self` and `total`), null for a thread with no sample
   * in the tree. Children keep the all-threads order, so a thread's heaviest child need not come
   * first.
   */
  threads?: (ThreadValues | null)[];
}

/** Sample rows to include: indices into a SampleColumns. */
export type SampleSelection = Iterable<number>;

/** All rows of `columns`. */
export function everySample(columns: SampleColumns): SampleSelection {
  return columns.stack.keys();
}

const addTo = (sums: Map<number, number>, key: number, value: number) => sums.set(key, (sums.get(key) ?? 0) + value);

/** Merges the selected samples' stacks (root → leaf) into a tree. */
export function buildFlameTree(index: SampleIndex, columns: SampleColumns, selection: SampleSelection): FlameTree {
  const { stackParent, stackFrame } = index;
  const self = new Map<number, number>();
  const threadSelf = index.threads.length > 1 ? index.threads.map(() => new Map<number, number>()) : undefined;
  for (const row of selection) {
    const node = columns.stack[row] as number;
    const value = columns.value[row] as number;
    addTo(self, node, value);
    if (threadSelf !== undefined) addTo(threadSelf[columns.thread[row] as number] as Map<number, number>, node, value);
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
  // The trie node and the parent's position of each tree node, for the threads' values.
  const trieNode: number[] = [];
  const parentAt: number[] = [];
  const stack: { node: number; depth: number; parent: number }[] = [{ node: 0, depth: 0, parent: -1 }];
  while (stack.length > 0) {
    const { node, depth, parent } = stack.pop() as { node: number; depth: number; parent: number };
    const position = tree.frame.length;
    tree.frame.push(stackFrame[node] as number);
    tree.depth.push(depth);
    tree.self.push(self.get(node) ?? 0);
    tree.total.push(total.get(node) as number);
    trieNode.push(node);
    parentAt.push(parent);
    const children = kids.get(node);
    if (children === undefined) continue;
    // Heaviest first on screen, so pushed last; equal weights keep trie order for stable output.
    children.sort((a, b) => (total.get(a) as number) - (total.get(b) as number) || b - a);
    for (const child of children) stack.push({ node: child, depth: depth + 1, parent: position });
  }
  if (threadSelf !== undefined) {
    const positionOf = new Map(trieNode.map((node, position) => [node, position]));
    const sums = new Float64Array(trieNode.length);
    tree.threads = threadSelf.map((selfOf) => (selfOf.size === 0 ? null : threadValues(selfOf, positionOf, parentAt, sums)));
  }
  return tree;
}

/**
 * A thread's values on a tree, from its self values by trie node: totals summed up in one backward
 * pass (in pre-order a node's descendants follow it), then the nodes it has time in. `sums` is
 * scratch space, one slot per tree node.
 */
function threadValues(
  selfOf: ReadonlyMap<number, number>,
  positionOf: ReadonlyMap<number, number>,
  parentAt: readonly number[],
  sums: Float64Array,
): ThreadValues {
  sums.fill(0);
  const self = new Map<number, number>();
  for (const [trieNode, value] of selfOf) {
    const position = positionOf.get(trieNode) as number;
    self.set(position, value);
    sums[position] = value;
  }
  for (let i = sums.length - 1; i > 0; i--) {
    const parent = parentAt[i] as number;
    sums[parent] = (sums[parent] as number) + (sums[i] as number);
  }
  const values: ThreadValues = { node: [], self: [], total: [] };
  sums.forEach((total, position) => {
    if (total <= 0) return;
    values.node.push(position);
    values.self.push(self.get(position) ?? 0);
    values.total.push(total);
  });
  return values;
}
