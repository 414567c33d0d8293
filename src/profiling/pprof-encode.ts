import { type PprofFormat, type Profile, pprofFormat } from './pprof-format.js';
import { varintLength, writeVarint } from '../util/varint.js';

/** Samples encoded between two points where the work may be interrupted. */
const SAMPLES_PER_STEP = 32;
/** Locations, or functions, encoded between two such points (smaller messages than samples). */
const ENTRIES_PER_STEP = 64;

/**
 * `profile.encode()` as steps, for slices.ts to spread over turns of the event loop. Samples,
 * locations and functions are most of a window's work (a busy 15 s window on the express app:
 * ~1 300 samples of stacks 40–100 deep, ~1 000 locations and functions). Under load, and cold in
 * the first window, 128 samples took 2–5 ms: a step is 32 samples, or 64 locations or functions,
 * and costs no measurable CPU over bigger ones. Protobuf merges concatenated messages and appends
 * their repeated fields, so the profile is encoded in parts, each a profile of only some of the
 * fields, in the order `encode()` writes them: sample types, the samples a step at a time,
 * mappings, the locations and then the functions a step at a time, and a tail (strings, times,
 * period). The bytes are exactly those `encode()` writes.
 */
export function* encodeInSteps(profile: Profile): Generator<void, Uint8Array> {
  const pf = pprofFormat();
  // A part carries only its own fields: an empty string table (a new one holds '') writes nothing.
  const part = (fields: ConstructorParameters<PprofFormat['Profile']>[0]) =>
    new pf.Profile({ ...fields, stringTable: new pf.StringTable(pf.emptyTableToken) }).encode();
  const parts = [part({ sampleType: profile.sampleType })];
  for (const sample of chunks(profile.sample, SAMPLES_PER_STEP)) {
    parts.push(encodeSamples(sample) ?? part({ sample }));
    yield;
  }
  parts.push(part({ mapping: profile.mapping }));
  for (const location of chunks(profile.location, ENTRIES_PER_STEP)) {
    parts.push(part({ location }));
    yield;
  }
  for (const functions of chunks(profile.function, ENTRIES_PER_STEP)) {
    parts.push(part({ function: functions }));
    yield;
  }
  parts.push(new pf.Profile({ ...profile, sampleType: [], sample: [], mapping: [], location: [], function: [] }).encode());
  return concat(parts);
}

type Sample = Profile['sample'][number];
type Label = Sample['label'][number];

/** pprof field tags (field number << 3 | wire type), as `Profile.encode()` writes them. */
const PROFILE_SAMPLE = (2 << 3) | 2;
const SAMPLE_LOCATION_ID = (1 << 3) | 2;
const SAMPLE_VALUE = (2 << 3) | 2;
const SAMPLE_LABEL = (3 << 3) | 2;
const LABEL_FIELDS = [(1 << 3) | 0, (2 << 3) | 0, (3 << 3) | 0, (4 << 3) | 0] as const;

/**
 * The samples as `Profile.encode()` writes them (field 2 of the profile, one message each), without
 * pprof-format's two arrays per number measured or written: a sample's stack is tens of location
 * IDs, which made the samples the slowest part of encoding a window, most of all a cold first one
 * under load. Non-negative safe integers only (our counts, nanoseconds and IDs); anything else is left
 * to pprof-format (undefined).
 */
function encodeSamples(samples: readonly Sample[]): Uint8Array | undefined {
  let total = 0;
  // Measured once, written in the same order: each sample's length, then each of its labels'.
  const lengths: number[] = [];
  for (const sample of samples) {
    const length = sampleLength(sample, lengths);
    if (length < 0) return undefined;
    total += 1 + varintLength(length) + length;
  }
  const out = new Uint8Array(total);
  let at = 0;
  let next = 0;
  for (const sample of samples) {
    out[at++] = PROFILE_SAMPLE;
    at = writeVarint(out, at, lengths[next++]!);
    at = writePacked(out, at, SAMPLE_LOCATION_ID, sample.locationId as number[]);
    at = writePacked(out, at, SAMPLE_VALUE, sample.value as number[]);
    for (const label of sample.label) {
      out[at++] = SAMPLE_LABEL;
      at = writeVarint(out, at, lengths[next++]!);
      labelFields(label).forEach((value, field) => {
        if (value === 0) return;
        out[at++] = LABEL_FIELDS[field]!;
        at = writeVarint(out, at, value as number);
      });
    }
  }
  return out;
}

/**
 * The encoded length of a sample's message, or -1 if a value is not a non-negative safe integer.
 * Appends to `lengths` the sample's length, then each label's, for the writer to take in order.
 */
function sampleLength(sample: Sample, lengths: number[]): number {
  const ids = packedLength(sample.locationId);
  const values = packedLength(sample.value);
  if (ids < 0 || values < 0) return -1;
  const at = lengths.push(0) - 1;
  let length = ids + values;
  for (const label of sample.label) {
    const inner = labelLength(label);
    if (inner < 0) return -1;
    lengths.push(inner);
    length += 1 + varintLength(inner) + inner;
  }
  lengths[at] = length;
  return length;
}

const labelFields = (label: Label): unknown[] => [label.key, label.str, label.num, label.numUnit];

function labelLength(label: Label): number {
  let length = 0;
  for (const value of labelFields(label)) {
    if (!isVarint(value)) return -1;
    if (value !== 0) length += 1 + varintLength(value);
  }
  return length;
}

/** Tag, length and the values of a packed field; nothing for an empty one (as pprof-format). */
function packedLength(values: readonly unknown[]): number {
  if (values.length === 0) return 0;
  let payload = 0;
  for (const value of values) {
    if (!isVarint(value)) return -1;
    payload += varintLength(value);
  }
  return 1 + varintLength(payload) + payload;
}

function writePacked(out: Uint8Array, at: number, tag: number, values: readonly number[]): number {
  if (values.length === 0) return at;
  let payload = 0;
  for (const value of values) payload += varintLength(value);
  out[at++] = tag;
  at = writeVarint(out, at, payload);
  for (const value of values) at = writeVarint(out, at, value);
  return at;
}

const isVarint = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

function concat(parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
