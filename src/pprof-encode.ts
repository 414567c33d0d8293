import { type PprofFormat, type Profile, pprofFormat } from './pprof-format.js';

/** Samples encoded between two points where the work may be interrupted. */
const SAMPLES_PER_STEP = 128;

/**
 * `profile.encode()` as steps, for slices.ts to spread over turns of the event loop. The samples
 * are most of a window's work (one per stack and span: ~1 300 in a busy 15 s window, ~5 ms to
 * encode at once, twice that the first time). Protobuf merges concatenated messages and appends
 * their repeated fields, so the profile is encoded as a head (sample types), the samples a step at
 * a time, each step a profile of only those samples, and a tail (locations, functions, strings,
 * times): the bytes are exactly those `encode()` writes, as its fields come in this order.
 */
export function* encodeInSteps(profile: Profile): Generator<void, Uint8Array> {
  const pf = pprofFormat();
  // A part carries only its own fields: an empty string table (a new one holds '') writes nothing.
  const part = (fields: ConstructorParameters<PprofFormat['Profile']>[0]) => new pf.Profile({ ...fields, stringTable: new pf.StringTable(pf.emptyTableToken) }).encode();
  const parts = [part({ sampleType: profile.sampleType })];
  for (let i = 0; i < profile.sample.length; i += SAMPLES_PER_STEP) {
    parts.push(part({ sample: profile.sample.slice(i, i + SAMPLES_PER_STEP) }));
    yield;
  }
  parts.push(new pf.Profile({ ...profile, sampleType: [], sample: [] }).encode());
  return concat(parts);
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
