/**
 * Whose code held the event loop through a stall, decided from the profile samples taken inside it.
 * Pure: a stall and its samples in, the block out (or nothing, when the stall was no block).
 */
import type { StallSample } from './stall-samples.js';

/** A stall as the watch saw it, on the monotonic clock in microseconds (stall-watch.ts Stall, scaled). */
export interface StallMicros {
  sinceMicros: number;
  dueMicros: number;
  untilMicros: number;
}

export interface StackShare {
  /** Index into the walk's stacks. */
  stack: number;
  samples: number;
  cpuNanos: number;
}

export interface Attribution<O> {
  /** When the block began and ended, monotonic microseconds. */
  startMicros: number;
  untilMicros: number;
  durationMs: number;
  /** The owner of most of its samples; undefined when most belong to no span (or there were none). */
  owner: O | undefined;
  /** Its samples that vote (JavaScript or GC running), and how many of them are the owner's. */
  samples: number;
  ownerSamples: number;
  /** Every stack its samples were in, the heaviest (most samples, then most CPU) first. */
  stacks: StackShare[];
  /** The owner's heaviest stack; undefined without samples. */
  heaviest: number | undefined;
}

/**
 * The block a stall was, or undefined when it was shorter than `thresholdMs`.
 *
 * When: the loop was surely busy from the watch's due time to the turn that ended the stall
 * (`untilMicros`); before the due time, the samples tell: the block began with the run of busy
 * samples that reaches the due time, and no earlier than the turn before (`sinceMicros`). An idle
 * sample is the loop waiting for work, so no block runs through one. Without samples the due time
 * stands. So a block reads up to one sampling interval short, and, on a loop busy with other work
 * just before it, up to one watch period long.
 *
 * Whose: the owner of the most busy samples ("outside any span", undefined, counts as one), a
 * span winning a tie with no span: a stall runs one task, or one turn's callbacks, and the one
 * that held the thread longest took the most samples. `(program)` samples (native code with no
 * JavaScript on the stack: the loop's own work between callbacks) show in the stacks but do not
 * vote, since the context they carry is whatever was set last.
 */
export function attributeStall<O>(stall: StallMicros, samples: readonly StallSample<O>[], thresholdMs: number): Attribution<O> | undefined {
  const inside = samples.filter((s) => s.atMicros >= stall.sinceMicros && s.atMicros <= stall.untilMicros).sort((a, b) => a.atMicros - b.atMicros);
  let start = stall.dueMicros;
  // The run of busy samples that reaches the due time: back from the last sample at or before it, to the first idle one.
  let runStart: number | undefined;
  for (let i = inside.length - 1; i >= 0; i--) {
    const sample = inside[i]!;
    if (sample.kind === 'idle') {
      if (sample.atMicros <= stall.dueMicros) break;
      continue;
    }
    if (sample.atMicros <= stall.dueMicros || runStart !== undefined) runStart = sample.atMicros;
  }
  if (runStart !== undefined) start = Math.min(start, runStart);
  const durationMs = (stall.untilMicros - start) / 1000;
  if (durationMs < thresholdMs) return undefined;

  const held = inside.filter((s) => s.atMicros >= start && s.kind !== 'idle');
  const votes = new Map<O | undefined, number>();
  for (const sample of held) if (sample.kind === 'busy') votes.set(sample.owner, (votes.get(sample.owner) ?? 0) + 1);
  let owner: O | undefined;
  let ownerSamples = 0;
  for (const [candidate, count] of votes) {
    if (count > ownerSamples || (count === ownerSamples && owner === undefined && candidate !== undefined)) {
      owner = candidate;
      ownerSamples = count;
    }
  }
  const samplesVoting = [...votes.values()].reduce((a, b) => a + b, 0);
  const stacks = sharesOf(held);
  const ownerStacks = sharesOf(held.filter((s) => s.kind === 'busy' && s.owner === owner));
  return {
    startMicros: start,
    untilMicros: stall.untilMicros,
    durationMs,
    owner,
    samples: samplesVoting,
    ownerSamples,
    stacks,
    heaviest: (ownerStacks[0] ?? stacks[0])?.stack,
  };
}

/** Samples per stack, heaviest first (most samples, then most CPU, then the first met). */
function sharesOf(samples: readonly StallSample<unknown>[]): StackShare[] {
  const byStack = new Map<number, StackShare>();
  for (const { stack, cpuNanos } of samples) {
    let share = byStack.get(stack);
    if (share === undefined) byStack.set(stack, (share = { stack, samples: 0, cpuNanos: 0 }));
    share.samples += 1;
    share.cpuNanos += cpuNanos;
  }
  return [...byStack.values()].sort((a, b) => b.samples - a.samples || b.cpuNanos - a.cpuNanos);
}
