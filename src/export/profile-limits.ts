import { type Profile, pprofFormat } from '../profiling/pprof-format.js';
import { encodeInSteps } from '../profiling/pprof-encode.js';

/**
 * Pyroscope's bounds on one uploaded profile, checked whole before it is split into series
 * (grafana/pyroscope pkg/validation validate.go ValidateProfile, defaults from limits.go
 * `max_profile_size_bytes`, `max_profile_stacktrace_samples`): past either, the whole profile is
 * refused — every request's samples of that window with it. A busy window crosses the samples
 * bound easily: every (stack, span) is a sample of its own.
 */
export const MAX_PROFILE_BYTES = 4 * 1024 * 1024;
export const MAX_PROFILE_SAMPLES = 16_000;

export interface IngestLimits {
  samples: number;
  /** Uncompressed: the server measures the pprof after gunzip. */
  bytes: number;
}

export const PYROSCOPE_LIMITS: IngestLimits = { samples: MAX_PROFILE_SAMPLES, bytes: MAX_PROFILE_BYTES };

/** What splitting did to one profile: how many pieces went, and samples none could carry (a single sample past the size bound). */
export interface Split {
  pieces: Uint8Array[];
  droppedSamples: number;
}

/**
 * The profile encoded as pprof bodies that each stay within `limits`: one when it fits, else
 * pieces of the same window, each holding some of the samples and only the locations, functions,
 * mappings and strings they use — Pyroscope sums profiles of one series and time, so the pieces
 * read as the whole. A piece still too big is halved again. A generator of steps (slices.ts).
 */
export function* encodeWithinLimits(profile: Profile, limits: IngestLimits = PYROSCOPE_LIMITS): Generator<void, Split> {
  if (profile.sample.length <= limits.samples) {
    const whole = yield* encodeInSteps(profile);
    if (whole.length <= limits.bytes) return { pieces: [whole], droppedSamples: 0 };
  }
  const pieces: Uint8Array[] = [];
  let droppedSamples = 0;
  // Taken from the end: the first chunk first, and a halved one's halves in their order.
  const pending = chunks(profile.sample, limits.samples).reverse();
  while (pending.length > 0) {
    const samples = pending.pop()!;
    const body = yield* encodeInSteps(pieceOf(profile, samples));
    if (body.length <= limits.bytes) pieces.push(body);
    else if (samples.length > 1) {
      const half = Math.ceil(samples.length / 2);
      pending.push(samples.slice(half), samples.slice(0, half));
    } else droppedSamples++;
  }
  return { pieces, droppedSamples };
}

/**
 * The profile as pieces of at most `maxSamples` samples each (one, itself, when it has no more):
 * for an encoding that measures its own size (OTLP's), where only the samples bound can be applied
 * before it.
 */
export function piecesBySamples(profile: Profile, maxSamples: number = MAX_PROFILE_SAMPLES): Profile[] {
  if (profile.sample.length <= maxSamples) return [profile];
  return chunks(profile.sample, maxSamples).map((samples) => pieceOf(profile, samples));
}

/** `samples` in as few chunks of at most `max` as there can be, of even sizes, in order. */
function chunks(samples: Profile['sample'], max: number): Profile['sample'][] {
  const size = Math.ceil(samples.length / Math.ceil(samples.length / max));
  const out: Profile['sample'][] = [];
  for (let at = 0; at < samples.length; at += size) out.push(samples.slice(at, at + size));
  return out;
}

/** A profile of `samples` of `whole`, with the tables they refer to only, strings renumbered. */
function pieceOf(whole: Profile, samples: Profile['sample']): Profile {
  const pf = pprofFormat();
  const wholeStrings = whole.stringTable.strings;
  const strings = new pf.StringTable();
  const str = (index: unknown): number => {
    const i = Number(index);
    return i === 0 ? 0 : strings.dedup(wholeStrings[i] ?? '');
  };
  const locationsById = new Map(whole.location.map((location) => [Number(location.id), location]));
  const functionsById = new Map(whole.function.map((fn) => [Number(fn.id), fn]));
  const mappingsById = new Map(whole.mapping.map((mapping) => [Number(mapping.id), mapping]));
  const locationIds = new Set<number>();
  for (const sample of samples) for (const id of sample.locationId) locationIds.add(Number(id));
  const location = [...locationIds].flatMap((id) => locationsById.get(id) ?? []);
  const functionIds = new Set(location.flatMap((l) => l.line.map((line) => Number(line.functionId))));
  const mappingIds = new Set(location.map((l) => Number(l.mappingId)));
  return new pf.Profile({
    sampleType: whole.sampleType.map((t) => ({ type: str(t.type), unit: str(t.unit) })),
    sample: samples.map((sample) => ({
      ...sample,
      label: sample.label.map((label) => ({ key: str(label.key), str: str(label.str), num: label.num, numUnit: str(label.numUnit) })),
    })),
    mapping: [...mappingIds].flatMap((id) => {
      const mapping = mappingsById.get(id);
      return mapping === undefined ? [] : [{ ...mapping, filename: str(mapping.filename), buildId: str(mapping.buildId) }];
    }),
    location,
    function: [...functionIds].flatMap((id) => {
      const fn = functionsById.get(id);
      return fn === undefined ? [] : [{ ...fn, name: str(fn.name), systemName: str(fn.systemName), filename: str(fn.filename) }];
    }),
    stringTable: strings,
    dropFrames: str(whole.dropFrames),
    keepFrames: str(whole.keepFrames),
    timeNanos: whole.timeNanos,
    durationNanos: whole.durationNanos,
    periodType: whole.periodType && { type: str(whole.periodType.type), unit: str(whole.periodType.unit) },
    period: whole.period,
    comment: whole.comment.map(str),
    defaultSampleType: str(whole.defaultSampleType),
    docUrl: str(whole.docUrl),
  });
}
