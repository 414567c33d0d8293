/**
 * A block of the event loop as pyro-run keeps and sends it: when, how long, the span whose code
 * held the thread, and the stacks its samples were in, its frames named by their source. Made from
 * an attribution (block-attribution.ts) and the stacks of the tree it came from.
 */
import type { SourceMapper } from '@datadog/pprof/out/src/sourcemapper/sourcemapper.js';
import { shownName, sourceFrame, type V8Frame } from '../profiling/pprof-tables.js';
import { frameOwner, isAppFrame } from '../report/frame-owner.js';
import { Interner } from '../util/interner.js';
import type { Attribution } from './block-attribution.js';

/** The span a block is charged to: its IDs and its name as the profiles label it (shaped, cut to fit). */
export interface BlockSpan {
  spanId: string;
  traceId: string;
  name: string;
}

/** A frame as the profiles name it: function, file, line. */
export interface BlockFrame {
  name: string;
  file: string;
  line: number;
}

export interface BlockStack {
  /** Indices into Block.frames, root first. */
  frames: number[];
  samples: number;
  cpuNs: number;
}

export interface Block {
  /** When it began, epoch milliseconds. */
  startedAt: number;
  durationMs: number;
  thresholdMs: number;
  /**
   * The span most of its samples belong to; undefined when most belong to none (or it has none),
   * or when the process did not run for the threshold of it (`ranMs`, block-attribution.ts heldByApp).
   */
  span: BlockSpan | undefined;
  /** How long of it the thread was there to hold the loop; the rest, the process did not run. */
  ranMs: number;
  /** Its samples with JavaScript (or GC) running, and how many of them are the span's. */
  samples: number;
  spanSamples: number;
  frames: BlockFrame[];
  /** Every stack its samples were in, heaviest first (at most MAX_STACKS). */
  stacks: BlockStack[];
  /** Index into `stacks`: the span's heaviest stack; -1 without samples. */
  heaviest: number;
  /** The innermost frame of the app's own code on the heaviest stack (else its leaf); undefined without samples. */
  where: BlockFrame | undefined;
}

/** Stacks kept per block: the heaviest, for its flame graph; the rest are a sample or two each. */
export const MAX_STACKS = 32;
/** Frames kept per stack, the leaf's end: what held the loop is there, and a recursion must not make a block megabytes. */
export const MAX_FRAMES = 128;

export interface BlockMaking<O> {
  thresholdMs: number;
  /** The span an owner stands for. */
  spanOf: (owner: O) => BlockSpan;
  sourceMapper: SourceMapper | undefined;
  /** The agent's dist folder: its frames are not the app's. */
  agentDir: string | undefined;
  /** The epoch's lead over the monotonic clock, milliseconds. */
  epochOffsetMs: number;
}

/** The block an attribution describes, `stacks` being the walk's (stall-samples.ts). */
export function blockOf<O>(attribution: Attribution<O>, stacks: readonly V8Frame[][], making: BlockMaking<O>): Block {
  const frameIds = new Interner<string>();
  const frames: BlockFrame[] = [];
  const frameId = (v8: V8Frame): number => {
    const source = sourceFrame(v8, making.sourceMapper);
    const frame = { name: shownName(source.name, source.line, source.column), file: source.file, line: source.line };
    const id = frameIds.id(`${frame.name}\0${frame.file}\0${frame.line}`);
    if (id === frames.length) frames.push(frame);
    return id;
  };
  const kept = attribution.stacks.slice(0, MAX_STACKS);
  if (attribution.heaviest !== undefined && !kept.some((share) => share.stack === attribution.heaviest)) {
    const heaviest = attribution.stacks.find((share) => share.stack === attribution.heaviest);
    if (heaviest !== undefined) kept[kept.length - 1] = heaviest;
  }
  const blockStacks = kept.map((share) => ({
    frames: (stacks[share.stack] ?? []).slice(-MAX_FRAMES).map(frameId),
    samples: share.samples,
    cpuNs: share.cpuNanos,
  }));
  const heaviest = kept.findIndex((share) => share.stack === attribution.heaviest);
  return {
    startedAt: attribution.startMicros / 1000 + making.epochOffsetMs,
    durationMs: attribution.durationMs,
    ranMs: attribution.ranMs,
    thresholdMs: making.thresholdMs,
    span: attribution.owner === undefined ? undefined : making.spanOf(attribution.owner),
    samples: attribution.samples,
    spanSamples: attribution.ownerSamples,
    frames,
    stacks: blockStacks,
    heaviest,
    where:
      heaviest < 0
        ? undefined
        : whereIn(
            blockStacks[heaviest]!.frames.map((id) => frames[id]!),
            making.agentDir,
          ),
  };
}

/** The innermost frame of the app's own code on a stack (root first), else its leaf. */
export function whereIn(stack: readonly BlockFrame[], agentDir: string | undefined): BlockFrame | undefined {
  for (let i = stack.length - 1; i >= 0; i--) {
    const frame = stack[i]!;
    if (isAppFrame(frameOwner(frame.name, frame.file, agentDir))) return frame;
  }
  return stack.at(-1);
}
