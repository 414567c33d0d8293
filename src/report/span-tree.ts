/**
 * How the spans of a run hang together, as far as profiles are concerned. A sample's `span_id`
 * names the span that labelled it: the local root in the default scope, or the span itself when
 * every span labels its own work (scope `all`). Reports group work by local root (an endpoint,
 * a queue consumer, a job), so every span is mapped to its local root here.
 */
import type { RunSpan } from './otlp-spans.js';

export interface SpanTree {
  /** Span index by span ID (the first span recorded with that ID wins). */
  byId: Map<string, number>;
  /** Index of each span's parent in the run, or -1. */
  parent: Int32Array;
  /** Index of each span's local root (itself for a local root). */
  root: Int32Array;
  /** Spans whose ID profile samples carry: local roots, and spans with `pyroscope.profile.id`. */
  profiled: boolean[];
}

/**
 * A local root is where this process's part of a trace starts: a span whose parent is not in the
 * run (a remote caller, or none), or one the linker marked (`pyroscope.profile.id`) under a parent
 * it did not mark — that only happens where a request re-enters the process, in scope `root`.
 */
function isLocalRoot(span: RunSpan, parent: RunSpan | undefined): boolean {
  if (parent === undefined) return true;
  return span.profileId !== undefined && parent.profileId === undefined;
}

const UNKNOWN = -1;
const ON_PATH = -2;

export function buildSpanTree(spans: readonly RunSpan[]): SpanTree {
  const byId = new Map<string, number>();
  spans.forEach((span, i) => {
    if (!byId.has(span.spanId)) byId.set(span.spanId, i);
  });
  const parent = new Int32Array(spans.length).fill(-1);
  const localRoot: boolean[] = [];
  spans.forEach((span, i) => {
    const p = span.parentSpanId === undefined ? undefined : byId.get(span.parentSpanId);
    // A parent in another trace is an ID collision, not a parent.
    const parentSpan = p === undefined || spans[p]?.traceId !== span.traceId ? undefined : spans[p];
    localRoot.push(isLocalRoot(span, parentSpan));
    if (parentSpan !== undefined) parent[i] = p as number;
  });

  // Iterative with memo: traces can be deep, and spans arrive in any order.
  const root = new Int32Array(spans.length).fill(UNKNOWN);
  const path: number[] = [];
  for (let i = 0; i < spans.length; i++) {
    let node = i;
    while (root[node] === UNKNOWN && !localRoot[node]) {
      root[node] = ON_PATH;
      path.push(node);
      node = parent[node] as number;
    }
    // Reaching a span already on the path means a parent cycle (corrupt IDs): where it closes
    // counts as the root.
    const known = root[node] as number;
    const top = known >= 0 ? known : node;
    root[node] = top;
    for (const visited of path) root[visited] = top;
    path.length = 0;
  }
  const profiled = spans.map((span, i) => localRoot[i] === true || span.profileId !== undefined);
  return { byId, parent, root, profiled };
}
