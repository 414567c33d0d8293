import type { SourceMapper } from '@datadog/pprof/out/src/sourcemapper/sourcemapper.js';
import type { Profile } from './pprof-format.js';
import type { ProfileType } from './profile-types.js';

export type { Profile };

/**
 * Whoever a sample is attributed to, as pprof labels: the span-link side hands these over,
 * profiling only writes them.
 */
export interface SampleLabels {
  toLabels(withTraceId: boolean): Record<string, string>;
}

/**
 * What one source (a sampler) took at a cut, not yet pprof: turned into its profiles later, off
 * the cut, in steps (slices.ts).
 */
export interface WindowPart {
  /** Builds its profiles, one per type it yields, yielding between steps. */
  build(from: number, sourceMapper: SourceMapper | undefined): Generator<void, Map<ProfileType, Profile>>;
  /** The contexts its samples were recorded with (span links), for those that carry any. */
  contexts?(): Iterable<unknown>;
  /** Once built: whom its samples were labelled for. */
  readonly labelled?: ReadonlySet<SampleLabels>;
}

/** A thread other than the one recording whose samples its windows carry too (a worker's). */
export interface OtherThread {
  /** Tells threads apart (the thread id). */
  key: number;
  /** Its `thread_name`. */
  name: string;
}

/** One flush interval of profiling: every source's part, cut together. */
export interface ProfileWindow {
  /** Epoch milliseconds. */
  from: number;
  until: number;
  parts: WindowPart[];
  /** Maps compiled frames back to their sources, when the app has maps. */
  sourceMapper?: SourceMapper | undefined;
  /** The longest the window's stops held the event loop (its gathers', or the cut's: every sampler's stop and restart), milliseconds. */
  longestStopMs: number;
  /** How many times the window's samplers were stopped: its gathers and its cut. */
  stops: number;
}

/** Every profile of a window, part after part, in steps. */
export function* buildWindow(window: ProfileWindow): Generator<void, Map<ProfileType, Profile>> {
  const profiles = new Map<ProfileType, Profile>();
  for (const part of window.parts) {
    for (const [type, profile] of yield* part.build(window.from, window.sourceMapper)) profiles.set(type, profile);
  }
  return profiles;
}
