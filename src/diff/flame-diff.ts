/**
 * A diff flame graph's tree: two runs' flame trees of the same requests (an endpoint's, or the
 * whole process's) merged by path, each node with its time per request in both runs. Per
 * request, never in totals: runs of different lengths and loads are compared by what a request
 * cost, as the rest of `pyro-run diff` compares them.
 *
 * It is the after run's flame graph, plus what only the before run had: a node's width (`total`,
 * which the page lays out as any flame tree) is its after time per request, and a frame the
 * after run no longer has takes its before time, next to its after siblings, so what went away
 * is seen too. Widths stay additive (a node's width is its own plus its children's), so the
 * report's layout and drawing serve it unchanged. Pure.
 */
import { endpointFlameTree, type FlameTree, processFlameTree, type RunModel } from '../report/aggregate.js';
import { PER_SPAN_TYPES, type PerSpanType } from '../profiling/profile-types.js';
import { recordOf } from '../report/sample-index.js';
import type { DiffFrames, DiffSide } from './diff-frames.js';
import type { EndpointSide } from './function-deltas.js';

export interface DiffFlameTree extends FlameTree {
  /** A node's time per request, nanoseconds, the node and what it calls, in each run (0 where a run has no such node). */
  before: number[];
  after: number[];
  /** Its own time per request (samples whose leaf it is), in each run. */
  beforeSelf: number[];
  afterSelf: number[];
}

/** One run's side of a merge: its tree (values in nanoseconds, frames of its model) over the requests it holds. */
export interface TreeSide {
  model: RunModel;
  tree: FlameTree;
  /** Requests the tree's samples are of; 0 leaves the side empty. */
  requests: number;
}

/** Nodes of the merged tree as they are met, a parent always before its children. */
class MergedNodes {
  readonly frame: number[] = [-1];
  readonly parent: number[] = [-1];
  readonly values: Record<'before' | 'after' | 'beforeSelf' | 'afterSelf', number[]> = { before: [0], after: [0], beforeSelf: [0], afterSelf: [0] };
  private readonly children: Map<number, number>[] = [new Map()];

  childOf(node: number, frame: number): number {
    const kids = this.children[node] as Map<number, number>;
    let child = kids.get(frame);
    if (child === undefined) {
      child = this.frame.length;
      kids.set(frame, child);
      this.frame.push(frame);
      this.parent.push(node);
      this.children.push(new Map());
      for (const list of Object.values(this.values)) list.push(0);
    }
    return child;
  }

  /** Adds one run's tree, each value over its requests; a side's frames matched through `frames`. */
  add(frames: DiffFrames, side: DiffSide, { model, tree, requests }: TreeSide): void {
    if (requests <= 0) return;
    const total = side === 'before' ? this.values.before : this.values.after;
    const self = side === 'before' ? this.values.beforeSelf : this.values.afterSelf;
    // The merged node of each depth's open node, walking the pre-order.
    const open: number[] = [];
    tree.frame.forEach((frame, i) => {
      const depth = tree.depth[i] as number;
      const node = depth === 0 ? 0 : this.childOf(open[depth - 1] as number, frames.frameOf(model, side, frame));
      open[depth] = node;
      total[node] = (total[node] as number) + (tree.total[i] as number) / requests;
      self[node] = (self[node] as number) + (tree.self[i] as number) / requests;
    });
  }
}

/**
 * Six significant digits: a sample is a microsecond or more of a run's time, so a value per
 * request has no more to tell, and the page embeds thousands of them. Relative, so a frame's
 * value never rounds to 0 (which would read as a frame the run does not have).
 */
const rounded = (value: number): number => Number(value.toPrecision(6));

/** The merged tree of `before` and `after` (either may be missing: an endpoint one run has not). */
export function diffFlameTree(frames: DiffFrames, before: TreeSide | undefined, after: TreeSide | undefined): DiffFlameTree {
  const nodes = new MergedNodes();
  if (before !== undefined) nodes.add(frames, 'before', before);
  if (after !== undefined) nodes.add(frames, 'after', after);
  const { before: was, after: is, beforeSelf, afterSelf } = nodes.values;
  const n = nodes.frame.length;
  // A node's own width: its after self time, or its before self time where the after run has none
  // of the node (then none of its descendants either). Summed bottom-up: children come after parents.
  const ownWidth = (node: number) => ((is[node] as number) > 0 ? (afterSelf[node] as number) : (beforeSelf[node] as number));
  const width = new Float64Array(n);
  const kids: number[][] = Array.from({ length: n }, () => []);
  for (let node = n - 1; node >= 0; node--) {
    width[node] = (width[node] as number) + ownWidth(node);
    const parent = nodes.parent[node] as number;
    if (parent < 0) continue;
    width[parent] = (width[parent] as number) + (width[node] as number);
    (kids[parent] as number[]).push(node);
  }
  const tree: DiffFlameTree = { frame: [], depth: [], self: [], total: [], before: [], after: [], beforeSelf: [], afterSelf: [] };
  const stack = [{ node: 0, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop() as { node: number; depth: number };
    tree.frame.push(nodes.frame[node] as number);
    tree.depth.push(depth);
    tree.total.push(rounded(width[node] as number));
    tree.self.push(rounded(ownWidth(node)));
    tree.before.push(rounded(was[node] as number));
    tree.after.push(rounded(is[node] as number));
    tree.beforeSelf.push(rounded(beforeSelf[node] as number));
    tree.afterSelf.push(rounded(afterSelf[node] as number));
    // Widest first on screen, so pushed last; equal widths in the order met, for stable output.
    const children = (kids[node] as number[]).sort((a, b) => (width[a] as number) - (width[b] as number) || b - a);
    for (const child of children) stack.push({ node: child, depth: depth + 1 });
  }
  return tree;
}

/** CPU and wall diff trees of one endpoint (undefined on the side it is missing from). */
export function endpointDiffTrees(frames: DiffFrames, before: EndpointSide | undefined, after: EndpointSide | undefined): Record<PerSpanType, DiffFlameTree> {
  const side = (of: EndpointSide | undefined, kind: PerSpanType): TreeSide | undefined =>
    of === undefined ? undefined : { model: of.model, tree: endpointFlameTree(of.model, of.endpoint, kind), requests: of.requests };
  return recordOf(PER_SPAN_TYPES, (kind) => diffFlameTree(frames, side(before, kind), side(after, kind)));
}

/**
 * CPU and wall diff trees of the whole process, per request of the run (every endpoint's): what
 * the process spent, inside requests or not, for each request it served. Its idle wall time
 * follows the load more than the code.
 */
export function processDiffTrees(
  frames: DiffFrames,
  before: { model: RunModel; requests: number },
  after: { model: RunModel; requests: number },
): Record<PerSpanType, DiffFlameTree> {
  const side = (of: { model: RunModel; requests: number }, kind: PerSpanType): TreeSide => ({
    model: of.model,
    tree: processFlameTree(of.model, kind),
    requests: of.requests,
  });
  return recordOf(PER_SPAN_TYPES, (kind) => diffFlameTree(frames, side(before, kind), side(after, kind)));
}
