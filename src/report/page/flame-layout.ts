/**
 * Where a flame tree's nodes go, and one thread's tree out of an all-threads tree. Both are kept
 * per tree object, so redrawing the same view costs nothing more.
 */
import type { FlameTree } from '../aggregate.js';

export interface Layout {
  /** Each node's x offset, in value units. */
  x: Float64Array;
  /** Each node's parent, -1 for the root. */
  parent: Int32Array;
  /** The end of each node's pre-order subtree: its descendants are the nodes before it. */
  end: Int32Array;
}

const layouts = new WeakMap<FlameTree, Layout>();

export function layout(tree: FlameTree): Layout {
  const cached = layouts.get(tree);
  if (cached) return cached;
  const n = tree.frame.length;
  const x = new Float64Array(n);
  const parent = new Int32Array(n).fill(-1);
  const end = new Int32Array(n).fill(n);
  const cursor = [0];
  const open: number[] = [];
  for (let i = 0; i < n; i++) {
    const depth = tree.depth[i]!;
    while (open.length > depth) end[open.pop()!] = i;
    parent[i] = depth > 0 ? open[depth - 1]! : -1;
    x[i] = cursor[depth] || 0;
    cursor[depth] = x[i]! + tree.total[i]!;
    cursor[depth + 1] = x[i]!;
    open.push(i);
  }
  const made = { x, parent, end };
  layouts.set(tree, made);
  return made;
}

/** Per all-threads tree, each thread's own (built on first use). */
const threadTrees = new WeakMap<FlameTree, FlameTree[]>();

/**
 * One thread's tree from the thread's values on an all-threads tree (its nodes, in the tree's
 * pre-order), siblings re-ordered heaviest first by the thread's own time, so the rest of the
 * page draws, zooms and searches it like any tree.
 */
export function threadTree(tree: FlameTree, thread: number): FlameTree {
  let perThread = threadTrees.get(tree);
  if (!perThread) threadTrees.set(tree, (perThread = []));
  const made = perThread[thread];
  if (made) return made;
  const values = tree.threads ? tree.threads[thread] : null;
  // A thread with no sample in the view gets an empty root: drawn as "no samples".
  let own: FlameTree = { frame: [-1], depth: [0], self: [0], total: [0] };
  if (values) {
    const nodes: FlameTree = {
      frame: values.node.map((i) => tree.frame[i]!),
      depth: values.node.map((i) => tree.depth[i]!),
      self: values.self,
      total: values.total,
    };
    const { end } = layout(nodes);
    own = { frame: [], depth: [], self: [], total: [] };
    const open = [0];
    while (open.length > 0) {
      const i = open.pop()!;
      own.frame.push(nodes.frame[i]!);
      own.depth.push(nodes.depth[i]!);
      own.self.push(nodes.self[i]!);
      own.total.push(nodes.total[i]!);
      const children: number[] = [];
      for (let child = i + 1; child < end[i]!; child = end[child]!) children.push(child);
      // Heaviest first on screen, so pushed last; equal weights keep the all-threads order.
      children.sort((a, b) => nodes.total[a]! - nodes.total[b]! || b - a);
      for (const child of children) open.push(child);
    }
  }
  perThread[thread] = own;
  return own;
}
