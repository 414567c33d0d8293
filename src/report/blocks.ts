/**
 * What a report says of the run's event-loop blocks: each kept block with the span and endpoint it
 * is charged to and where its heaviest stack was in the app's own code, the count and threshold,
 * and each block's flame graph (its own samples: CPU, and wall time as samples × the sampling
 * interval). Pure.
 */
import { heldByApp } from '../blocks/block-attribution.js';
import type { PerSpanType } from '../profiling/profile-types.js';
import { buildFlameTree, everySample, type FlameTree } from './flame-tree.js';
import type { RunBlock } from './run-blocks.js';
import type { SampleColumns, SampleIndex } from './sample-index.js';

export interface BlockStats {
  /** Epoch milliseconds. */
  startMs: number;
  durationMs: number;
  /** The span it is charged to (its name as the profiles label it: the endpoint's); '' and undefined IDs when none. */
  name: string;
  /** The process did not run for the threshold of it (block-attribution.ts heldByApp): no one's code held the loop. */
  notRunning: boolean;
  spanId: string | undefined;
  traceId: string | undefined;
  /** Index into the report's endpoints of that name, -1 when none. */
  endpoint: number;
  /** Its samples with JavaScript (or GC) running, and how many were the span's. */
  samples: number;
  spanSamples: number;
  /** The innermost frame of the app's own code on its heaviest stack (else the stack's leaf), -1 without samples. */
  where: number;
}

export interface BlocksSummary {
  /** Blocks are stalls of this long or longer. */
  thresholdMs: number;
  /** Every block of the run; `list` holds the longest (those the recording kept), longest first. */
  count: number;
  list: BlockStats[];
}

/** The innermost app frame above (or at) a trie node, else the node's own frame. */
function whereOf(index: SampleIndex, node: number): number {
  for (let at = node; at > 0; at = index.stackParent[at]!) {
    const frame = index.stackFrame[at]!;
    if (index.frames.app[frame]) return frame;
  }
  return node > 0 ? index.stackFrame[node]! : -1;
}

/** The blocks' summary; undefined when the recording says blocks were not watched and holds none. */
export function blocksSummary(
  watched: { thresholdMs: number; count: number } | undefined,
  blocks: readonly RunBlock[],
  index: SampleIndex,
  endpointNames: readonly string[],
): BlocksSummary | undefined {
  if (watched === undefined && blocks.length === 0) return undefined;
  const thresholdMs = watched?.thresholdMs ?? 0;
  const list = blocks.map((block): BlockStats => {
    const heaviest = block.stacks[block.heaviest];
    return {
      startMs: block.startedAtMs,
      durationMs: block.durationMs,
      name: block.span?.name ?? '',
      notRunning: !heldByApp(block.ranMs, thresholdMs),
      spanId: block.span?.spanId,
      traceId: block.span?.traceId,
      endpoint: block.span === undefined ? -1 : endpointNames.indexOf(block.span.name),
      samples: block.samples,
      spanSamples: block.spanSamples,
      where: heaviest === undefined ? -1 : whereOf(index, heaviest.node),
    };
  });
  return { thresholdMs, count: Math.max(watched?.count ?? 0, blocks.length), list };
}

/** A block's flame graph per type: its stacks, CPU by their CPU time, wall by their samples × `intervalNs`. */
export function blockFlameTrees(index: SampleIndex, block: RunBlock, intervalNs: number): Record<PerSpanType, FlameTree> {
  const columns = (value: (stack: RunBlock['stacks'][number]) => number): SampleColumns => ({
    stack: block.stacks.map((stack) => stack.node),
    value: block.stacks.map(value),
    label: block.stacks.map(() => -1),
    thread: block.stacks.map(() => 0),
  });
  const tree = (c: SampleColumns) => buildFlameTree(index, c, everySample(c));
  return { cpu: tree(columns((stack) => stack.cpuNs)), wall: tree(columns((stack) => stack.samples * intervalNs)) };
}
