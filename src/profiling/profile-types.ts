/**
 * Every profile type pyro-run can collect, in one table: what records it, what its pprof holds,
 * what Pyroscope files it under and how a recording's report reads it. A new profile type is a
 * row here and, for a new kind of sampler, one source file (profile-sources.ts lists them).
 */

/** A pprof value type: `type/unit` of a sample value or of the period. */
export interface ValueTypeName {
  readonly type: string;
  readonly unit: string;
}

/** Which sampler records a profile type: one sampler can yield several types from one recording. */
export type SourceName = 'time' | 'heap' | 'allocation';

export interface ProfileTypeInfo {
  source: SourceName;
  /** The pprof's sample types, in value order. */
  sampleTypes: readonly ValueTypeName[];
  periodType: ValueTypeName;
  /** The value the report draws (an index into sampleTypes). */
  shownValue: number;
  /**
   * The metric Pyroscope files the profile under, derived by the server from the sample types
   * (grafana/pyroscope pkg/og/convert/pprof/profile.go RawProfile.metricName): any `wall` makes
   * `wall`, one containing `cpu` makes `process_cpu`, `inuse_`/`alloc_`/`space`/`objects` make `memory`.
   */
  pyroscopeName: string;
  /**
   * As the OTLP profiles signal carries it (one sample type per Profile): one OTLP Profile per
   * entry, from the pprof's value `value`, under sample type `sampleType` (default: the pprof's)
   * and the pprof's period type. `perPeriod`: the value sent is in periods (rounded), as
   * Pyroscope's OTLP ingest reads `samples/count` with a `cpu/nanoseconds` period as CPU time, value
   * × period, filed as `process_cpu` (grafana/pyroscope pkg/ingester/otlp/convert.go).
   */
  otlp: readonly { value: number; sampleType?: ValueTypeName; perPeriod?: boolean }[];
  /** How the report and the exit summary name it. */
  title: string;
  /** Whether its samples carry the span that ran them (the report then splits it by endpoint and span). */
  perSpan: boolean;
  /**
   * How windows add up: a time profile's samples happened in its window, so windows sum; a heap
   * profile is what was live at the cut, so the latest window is the state, and two never add.
   */
  across: 'sum' | 'latest';
}

const SAMPLES = { type: 'samples', unit: 'count' } as const;
const CPU = { type: 'cpu', unit: 'nanoseconds' } as const;
const WALL = { type: 'wall', unit: 'nanoseconds' } as const;
const INUSE_OBJECTS = { type: 'inuse_objects', unit: 'count' } as const;
const INUSE_SPACE = { type: 'inuse_space', unit: 'bytes' } as const;
const ALLOC_OBJECTS = { type: 'alloc_objects', unit: 'count' } as const;
const ALLOC_SPACE = { type: 'alloc_space', unit: 'bytes' } as const;

export const PROFILE_TYPES = {
  cpu: {
    source: 'time',
    sampleTypes: [SAMPLES, CPU],
    periodType: CPU,
    shownValue: 1,
    pyroscopeName: 'process_cpu',
    otlp: [{ value: 1, sampleType: SAMPLES, perPeriod: true }],
    title: 'CPU',
    perSpan: true,
    across: 'sum',
  },
  wall: {
    source: 'time',
    sampleTypes: [SAMPLES, WALL],
    periodType: WALL,
    shownValue: 1,
    pyroscopeName: 'wall',
    otlp: [{ value: 1 }],
    title: 'wall',
    perSpan: true,
    across: 'sum',
  },
  heap: {
    source: 'heap',
    sampleTypes: [INUSE_OBJECTS, INUSE_SPACE],
    periodType: INUSE_SPACE,
    shownValue: 1,
    pyroscopeName: 'memory',
    otlp: [{ value: 1 }, { value: 0 }],
    title: 'memory in use',
    perSpan: false,
    across: 'latest',
  },
  alloc: {
    source: 'allocation',
    sampleTypes: [ALLOC_OBJECTS, ALLOC_SPACE],
    periodType: ALLOC_SPACE,
    shownValue: 1,
    pyroscopeName: 'memory',
    otlp: [{ value: 1 }, { value: 0 }],
    title: 'memory allocated',
    perSpan: false,
    across: 'sum',
  },
} as const satisfies Record<string, ProfileTypeInfo>;

export type ProfileType = keyof typeof PROFILE_TYPES;
/** The types whose samples carry their span: cpu and wall. */
export type PerSpanType = { [K in ProfileType]: (typeof PROFILE_TYPES)[K]['perSpan'] extends true ? K : never }[ProfileType];

/** The types in table order, for flags, help and validation. */
export const PROFILE_TYPE_NAMES = Object.keys(PROFILE_TYPES) as ProfileType[];

export const PER_SPAN_TYPES = PROFILE_TYPE_NAMES.filter((type): type is PerSpanType => PROFILE_TYPES[type].perSpan);

/** The sample type the report draws, e.g. `cpu`, `wall`, `inuse_space`. */
export function shownSampleType(type: ProfileType): ValueTypeName {
  const info = profileTypeInfo(type);
  return info.sampleTypes[info.shownValue]!;
}

export function isProfileType(word: string): word is ProfileType {
  return Object.hasOwn(PROFILE_TYPES, word);
}

/** The row of `type`, typed as the general shape (so callers need not care which row it is). */
export function profileTypeInfo(type: ProfileType): ProfileTypeInfo {
  return PROFILE_TYPES[type];
}
