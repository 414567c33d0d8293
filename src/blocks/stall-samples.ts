/**
 * The samples of a time sampler's tree that fall inside given stretches of time, with their stack,
 * their owner and their CPU time. The sampler records with every sample its timestamp and the
 * context the span-link side had set (docs/architecture.md, "Linking"), so a stall's samples say
 * whose code held the loop and where. Pure: the tree comes in, plain records go out.
 */
import type { TimeProfile, TimeProfileNode, TimeProfileNodeContext } from '@datadog/pprof/out/src/v8-types.js';
import type { V8Frame } from '../profiling/pprof-tables.js';

/** What a sample was: JavaScript (or GC) running, the thread waiting for work, or native code with no JavaScript on the stack. */
export type SampleKind = 'busy' | 'idle' | 'program';

export interface StallSample<O> {
  /** When it was taken, monotonic microseconds (performance.now()'s clock). */
  atMicros: number;
  kind: SampleKind;
  /** Whose it is (the sampler's `spanOf` answer), undefined for no one's. */
  owner: O | undefined;
  /** Its stack: an index into the walk's `stacks`. */
  stack: number;
  /** Thread CPU time since the sample before, nanoseconds (0 without CPU time). */
  cpuNanos: number;
}

/** A stretch to collect samples from, monotonic microseconds, both ends included. */
export interface Stretch {
  fromMicros: number;
  toMicros: number;
}

export interface StretchSamples<O> {
  /** Per stretch, in the order given: its samples, oldest first. */
  samples: StallSample<O>[][];
  /** The stacks the samples name, each root first (V8's `(root)` left out). */
  stacks: V8Frame[][];
}

/** V8's names for the frames that are not JavaScript (the root's children in its profile tree). */
const V8_IDLE = '(idle)';
const V8_PROGRAM = '(program)';

/**
 * The samples of `raw` inside each of `stretches`. Timestamps are epoch microseconds, through the
 * system clock read at the stop; minus `epochOffsetMicros` (the epoch's lead over the monotonic
 * clock then, as TimeFold takes it) they are monotonic. `ownerOf` answers as the fold's `spanOf`
 * does, so a stall is owned by the spans the profiles label its samples with.
 */
export function samplesWithin<O>(
  raw: TimeProfile,
  epochOffsetMicros: number,
  stretches: readonly Stretch[],
  ownerOf: (context: TimeProfileNodeContext, atMicros: number) => O | undefined,
): StretchSamples<O> {
  const out: StretchSamples<O> = { samples: stretches.map(() => []), stacks: [] };
  if (stretches.length === 0) return out;
  const from = Math.min(...stretches.map((s) => s.fromMicros));
  const to = Math.max(...stretches.map((s) => s.toMicros));
  // Depth-first, with the path from the root: a node's stack is interned only when one of its samples is wanted.
  const path: TimeProfileNode[] = [];
  const visit = (node: TimeProfileNode, depth: number): void => {
    path.length = depth;
    path.push(node);
    let stack = -1;
    for (const context of node.contexts ?? []) {
      const at = Number(context.timestamp) - epochOffsetMicros;
      if (at < from || at > to) continue;
      stretches.forEach((stretch, i) => {
        if (at < stretch.fromMicros || at > stretch.toMicros) return;
        if (stack < 0) stack = out.stacks.push(path.slice(1).map(frameOf)) - 1;
        out.samples[i]!.push({ atMicros: at, kind: kindOf(path), owner: ownerOf(context, at), stack, cpuNanos: context.cpuTime ?? 0 });
      });
    }
    for (const child of node.children as TimeProfileNode[]) visit(child, depth + 1);
  };
  visit(raw.topDownRoot, 0);
  for (const samples of out.samples) samples.sort((a, b) => a.atMicros - b.atMicros);
  return out;
}

/** `path` from the root (V8's `(root)`) down to the sample's node. */
function kindOf(path: readonly TimeProfileNode[]): SampleKind {
  const top = path[1]?.name;
  if (top === V8_IDLE) return 'idle';
  if (top === V8_PROGRAM) return 'program';
  return 'busy';
}

function frameOf(node: TimeProfileNode): V8Frame {
  return {
    name: node.name ?? '',
    scriptName: node.scriptName,
    scriptId: node.scriptId ?? 0,
    lineNumber: node.lineNumber ?? 0,
    columnNumber: node.columnNumber ?? 0,
  };
}
