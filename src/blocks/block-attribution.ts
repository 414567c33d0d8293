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
  /** How long of it the thread was there to hold the loop (ranFor); the rest, the process did not run. */
  ranMs: number;
}

export interface Attributing {
  thresholdMs: number;
  /** The time sampler's interval. */
  intervalMicros: number;
}

/**
 * Whether a stall the thread was there for `ranMs` of was the app's: its code held the loop for the
 * threshold. A shorter presence is a stall of the process (not run by the machine), no one's block.
 */
export function heldByApp(ranMs: number, thresholdMs: number): boolean {
  return ranMs >= thresholdMs;
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
 * Whether: the process may not have run through it (stopped, throttled by a CPU quota, waiting for
 * a core on a loaded machine), and then whatever code was current when it stopped is not what held
 * the loop. Only a stall the thread was there for the threshold (ranFor) is anyone's block; another
 * is charged to no span.
 *
 * Whose: the owner of the most busy samples ("outside any span", undefined, counts as one), a
 * span winning a tie with no span: a stall runs one task, or one turn's callbacks, and the one
 * that held the thread longest took the most samples. `(program)` samples (native code with no
 * JavaScript on the stack: the loop's own work between callbacks) show in the stacks but do not
 * vote, since the context they carry is whatever was set last.
 */
export function attributeStall<O>(
  stall: StallMicros,
  samples: readonly StallSample<O>[],
  { thresholdMs, intervalMicros }: Attributing,
): Attribution<O> | undefined {
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

  const during = inside.filter((s) => s.atMicros >= start);
  const ranMs = ranFor(during, start, stall.untilMicros, intervalMicros) / 1000;
  const held = during.filter((s) => s.kind !== 'idle');
  const voters = held.filter((s) => s.kind === 'busy');
  const stacks = sharesOf(held);
  const ran = heldByApp(ranMs, thresholdMs);
  const { owner, ownerSamples } = ran ? mostVoted(voters) : { owner: undefined, ownerSamples: 0 };
  const ownerStacks = ran ? sharesOf(voters.filter((s) => s.owner === owner)) : [];
  return {
    startMicros: start,
    untilMicros: stall.untilMicros,
    durationMs,
    owner,
    samples: voters.length,
    ownerSamples,
    stacks,
    heaviest: (ownerStacks[0] ?? stacks[0])?.stack,
    ranMs,
  };
}

/** The owner of the most samples, a span winning a tie with no span (undefined). */
function mostVoted<O>(voters: readonly StallSample<O>[]): { owner: O | undefined; ownerSamples: number } {
  const votes = new Map<O | undefined, number>();
  for (const { owner } of voters) votes.set(owner, (votes.get(owner) ?? 0) + 1);
  let owner: O | undefined;
  let ownerSamples = 0;
  for (const [candidate, count] of votes) {
    if (count > ownerSamples || (count === ownerSamples && owner === undefined && candidate !== undefined)) {
      owner = candidate;
      ownerSamples = count;
    }
  }
  return { owner, ownerSamples };
}

/**
 * How long of [fromMicros, untilMicros] the thread was there — running, or waiting in a call of its
 * own — as its samples (oldest first) vouch. V8's sampler takes a sample by signalling the thread
 * (libsampler's sampler.cc, pthread_kill of SIGPROF), and the thread records it in the handler, so
 * a thread the machine does not run takes none: a stopped or throttled process leaves a gap in its
 * samples, ended by one whose CPU time (since the sample before) is a fraction of it. A gap counts
 * for that CPU time, or one interval when less (the thread took the signal: a call that waits is
 * the app's), and never more than itself; the time after the last sample counts up to an interval.
 * Without CPU time (CPU profiles off) a sampler thread starved on a busy machine reads as the
 * thread not running too.
 */
export function ranFor(samples: readonly StallSample<unknown>[], fromMicros: number, untilMicros: number, intervalMicros: number): number {
  let ran = 0;
  let last = fromMicros;
  for (const { atMicros, cpuNanos } of samples) {
    ran += Math.min(atMicros - last, Math.max(cpuNanos / 1000, intervalMicros));
    last = atMicros;
  }
  return ran + Math.min(untilMicros - last, intervalMicros);
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
