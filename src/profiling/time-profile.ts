import type { SourceMapper } from '@datadog/pprof/out/src/sourcemapper/sourcemapper.js';
import type { TimeProfile } from '@datadog/pprof/out/src/v8-types.js';
import { LABEL_THREAD_NAME, MAIN_THREAD_NAME } from '../wire.js';
import type { PprofFormat } from './pprof-format.js';
import { PprofTables } from './pprof-tables.js';
import { PROFILE_TYPES, type ProfileType } from './profile-types.js';
import type { Profile, SampleLabels, WindowPart } from './profile-window.js';
import { type FoldSum, type SpanOf, TimeFold, type WorkBetween } from './time-fold.js';

export type { Profile };
export { TimeFold };
type Label = InstanceType<PprofFormat['Label']>;
type Sample = InstanceType<PprofFormat['Sample']>;

/** How the samples of one window are turned into pprof. */
export interface TimeBuild {
  /** The sampling interval asked for (µs); the real mean interval is recomputed from each thread's samples. */
  intervalMicros: number;
  /** Which profiles to make (cpu, wall). */
  types: readonly ProfileType[];
  /** Who a sample belongs to (time-fold.ts). */
  spanOf: SpanOf;
  /** Whose work ran whole between two samples, where the thread keeps track (a worker's messages). */
  workBetween?: WorkBetween;
  traceIdLabel: boolean;
  /**
   * Bounds the values of a window's labels (the span-link side's span_name cap): handed the label
   * set of every span the window sampled, once per build, it may rewrite values in place.
   */
  boundLabels?: (labelSets: readonly Record<string, string>[]) => void;
}

/** One thread's samples of a window, and the `thread_name` they are labelled with. */
export interface ThreadFold {
  name: string;
  fold: TimeFold;
}

/**
 * The time sampler's part of a window, from its trees (one per gather, gather-pace.ts, oldest
 * first): folded now, built into the CPU and wall pprof later.
 */
export function timePart(raws: readonly TimeProfile[], build: TimeBuild): WindowPart {
  return threadsPart([{ name: MAIN_THREAD_NAME, fold: foldOf(raws, build) }], build);
}

/** The CPU and wall pprof of a window's trees (TimeFold: folded, then built in steps). */
export function buildTimeProfiles(
  raws: readonly TimeProfile[],
  from: number,
  build: TimeBuild,
  sourceMapper?: SourceMapper,
  labelled?: Set<SampleLabels>,
): Generator<void, Map<ProfileType, Profile>> {
  return buildThreadProfiles([{ name: MAIN_THREAD_NAME, fold: foldOf(raws, build) }], from, build, sourceMapper, labelled);
}

/** Trees given whole (the encoder's warm-up, tests) have their timestamps on the monotonic clock already. */
function foldOf(raws: readonly TimeProfile[], build: TimeBuild): TimeFold {
  const fold = new TimeFold(build.spanOf, build.workBetween);
  for (const raw of raws) fold.add(raw, 0);
  return fold;
}

/** A window's time part from the folds of its threads, the main thread's first: built into pprof from them, as often as asked. */
export function threadsPart(threads: readonly ThreadFold[], build: TimeBuild): WindowPart {
  const labelled = new Set<SampleLabels>();
  return {
    build: (from, sourceMapper) => buildThreadProfiles(threads, from, build, sourceMapper, labelled),
    contexts: function* () {
      for (const { fold } of threads) yield* fold.spansSampled();
    },
    labelled,
  };
}

/** (stack, span) sums made pprof samples between two checks of the time slice (64 stacks took up to 8–11 ms in a cold first window under load). */
const SUMS_PER_STEP = 16;

/**
 * The CPU and wall pprof of a window, every thread's samples in one profile each, labelled with
 * their `thread_name` (the main thread's fold first: its time covered and its sampling interval are
 * the profile's). A generator that yields every few dozen stacks, so the caller can spread the work
 * over several turns of the event loop (`runSliced`) or run it through at exit (`runNow`),
 * slices.ts. Span names are read now, when the window is built (an HTTP span learns its route after
 * it started); `labelled` receives whom samples were labelled for.
 */
export function* buildThreadProfiles(
  threads: readonly ThreadFold[],
  from: number,
  build: TimeBuild,
  sourceMapper?: SourceMapper,
  labelled?: Set<SampleLabels>,
): Generator<void, Map<ProfileType, Profile>> {
  const tables = new PprofTables(sourceMapper);
  const { Profile, Sample, Label } = tables.format;
  const strings = tables.strings;
  const withCpu = threads.some(({ fold }) => fold.hasCpuTime) && build.types.includes('cpu');
  const withWall = build.types.includes('wall');
  const cpuSamples: Sample[] = [];
  const wallSamples: Sample[] = [];
  // Every span's labels first, so that they are bounded as a set (and the names read once).
  const labelSets = new Map<SampleLabels, Record<string, string>>();
  for (const { fold } of threads) for (const span of fold.spansSampled()) if (!labelSets.has(span)) labelSets.set(span, span.toLabels(build.traceIdLabel));
  build.boundLabels?.([...labelSets.values()]);
  const spanLabels = new Map<SampleLabels, Label[]>();
  const labelsOfSpan = (span: SampleLabels): Label[] => {
    let labels = spanLabels.get(span);
    if (labels === undefined) {
      const set = labelSets.get(span) ?? span.toLabels(build.traceIdLabel);
      labels = Object.entries(set).map(([key, value]) => new Label({ key: strings.dedup(key), str: strings.dedup(value) }));
      spanLabels.set(span, labels);
      labelled?.add(span);
    }
    return labels;
  };

  for (const [index, { name, fold }] of threads.entries()) {
    const intervalNanos = fold.meanIntervalMicros(build.intervalMicros) * 1000;
    const thread = new Label({ key: strings.dedup(LABEL_THREAD_NAME), str: strings.dedup(name) });
    const alone = [thread];
    const withThread = new Map<SampleLabels, Label[]>();
    const labelsOf = (span: SampleLabels | undefined): Label[] => {
      if (span === undefined) return alone;
      let labels = withThread.get(span);
      if (labels === undefined) withThread.set(span, (labels = [...labelsOfSpan(span), thread]));
      return labels;
    };
    const emit = ({ stack, span, count, wallCount, cpu }: FoldSum): void => {
      const label = labelsOf(span);
      const wall = wallCount * intervalNanos;
      if (withCpu && cpu > 0) cpuSamples.push(new Sample({ locationId: stack, value: [count, cpu], label }));
      if (withWall && (count > 0 || wall > 0)) wallSamples.push(new Sample({ locationId: stack, value: [count, wall], label }));
    };
    // Script ids are numbered per thread: a worker's frames are told apart from the main thread's.
    const scope = index === 0 ? '' : `t${index}/`;
    yield* fold.sums((frame) => tables.locationOf(frame, scope), emit, SUMS_PER_STEP);
  }

  const main = threads[0]?.fold;
  const profiles = new Map<ProfileType, Profile>();
  const make = (type: 'cpu' | 'wall', sample: Sample[]) => {
    const info = PROFILE_TYPES[type];
    return new Profile({
      sampleType: info.sampleTypes.map((t) => tables.valueType(t)),
      sample,
      location: tables.locations,
      function: tables.functions,
      stringTable: strings,
      timeNanos: BigInt(from) * 1_000_000n,
      durationNanos: (main?.durationMicros ?? 0) * 1000,
      periodType: tables.valueType(info.periodType),
      period: (main?.meanIntervalMicros(build.intervalMicros) ?? build.intervalMicros) * 1000,
    });
  };
  if (withCpu) profiles.set('cpu', make('cpu', cpuSamples));
  if (withWall) profiles.set('wall', make('wall', wallSamples));
  return profiles;
}
