/** The tree the flame graph draws for the page's state, and how its title names it. */
import type { FlameTree } from '../aggregate.js';
import type { PerSpanType } from '../../profiling/profile-types.js';
import { chargedTo } from '../blocked-by.js';
import { formatDuration, formatTime } from '../format.js';
import { data } from './data.js';
import { threadTree } from './flame-layout.js';
import { state } from './state.js';

export function currentTree(): FlameTree {
  const trees = data.trees;
  // Every view but the process's has a per-span type (selectView and the disabled toggles see to it).
  const perSpan = state.kind as PerSpanType;
  let tree = trees.process[state.kind];
  if (state.view.type === 'endpoint') tree = trees.endpoints[state.view.index]![perSpan];
  if (state.view.type === 'span') tree = trees.slowest[state.view.index]![perSpan];
  if (state.view.type === 'request') tree = trees.requests[state.view.index]![perSpan];
  if (state.view.type === 'block') tree = trees.blocks[state.view.index]![perSpan];
  return state.thread < 0 ? tree : threadTree(tree, state.thread);
}

/** The picked thread's name, when one is. */
export const threadName = (): string => data.threads![state.thread]!.name;

/** ' · worker 1 thread' when one thread is picked, else ''. */
export const threadSuffix = (): string => (state.thread < 0 ? '' : ` · ${threadName()} thread`);

export function viewTitle(): string {
  if (state.view.type === 'endpoint') return `Endpoint ${data.endpoints[state.view.index]!.name}`;
  if (state.view.type === 'span') {
    const span = data.slowest[state.view.index]!;
    return `Span ${span.name} (${formatDuration(span.durationNs)}, trace ${span.traceId})`;
  }
  if (state.view.type === 'request') {
    const endpoint = data.endpoints[state.view.index]!;
    return `Slowest request of ${endpoint.name} (${formatDuration(endpoint.waits!.waterfall!.durationNs)})`;
  }
  if (state.view.type === 'block') {
    const block = data.blocks!.list[state.view.index]!;
    return `Event-loop block of ${formatDuration(block.durationMs * 1e6)} in ${chargedTo(block)} at ${formatTime(block.startMs)}`;
  }
  return 'Whole process';
}
