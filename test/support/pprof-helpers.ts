// Read-side helpers over a decoded pprof-format Profile, so tests can talk in
// function names, label strings and sample-type names instead of string-table
// indices.

import type { Function as PprofFunction, Location, Profile, Sample } from 'pprof-format';
import { sampleTypeNames, stringAt } from './pyroscope-metric.js';

/**
 * The labels Pyroscope keeps on individual samples to link them to spans:
 * grafana/pyroscope pkg/pprof/pprof.go. `profile_id` is first renamed to
 * `span_id` (RenameLabel, "for compatibility with the existing clients"), and
 * a value counts only if it is exactly 16 hex characters (decodeSpanID; Go's
 * hex.Decode accepts either case). The distributor's VisitSampleSeries
 * groups samples by every other label (GroupSamplesWithoutLabels, same file,
 * called with span_id only), so trace_id and the rest become series labels;
 * the server source has no trace_id-specific rule, and isValidTraceId below
 * only checks the W3C/OTLP form.
 */
export const SPAN_ID_LABEL = 'span_id';
export const PROFILE_ID_LABEL = 'profile_id';
export const TRACE_ID_LABEL = 'trace_id';

export function isValidSpanId(value: string): boolean {
  return /^[0-9a-fA-F]{16}$/.test(value);
}

/** W3C / OTLP trace-id form: 32 hex characters. */
export function isValidTraceId(value: string): boolean {
  return /^[0-9a-fA-F]{32}$/.test(value);
}

/** String labels of a sample. Numeric labels are omitted: the server drops them (Profile.Normalize). */
export function labelsOf(profile: Profile, sample: Sample): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const label of sample.label) {
    if (Number(label.str) === 0) continue;
    labels[stringAt(profile, label.key)] = stringAt(profile, label.str);
  }
  return labels;
}

interface ProfileIndex {
  locations: Map<number, Location>;
  functions: Map<number, PprofFunction>;
}

// Built once per profile: benchmarks push large profiles through these helpers.
const indexes = new WeakMap<Profile, ProfileIndex>();

function indexOf(profile: Profile): ProfileIndex {
  let index = indexes.get(profile);
  if (index === undefined) {
    index = {
      locations: new Map(profile.location.map((loc) => [Number(loc.id), loc])),
      functions: new Map(profile.function.map((fn) => [Number(fn.id), fn])),
    };
    indexes.set(profile, index);
  }
  return index;
}

/** Function names of the stack, leaf first (location_id[0] is the leaf; within a location line[0] is the innermost inlined frame). */
export function functionNamesOf(profile: Profile, sample: Sample): string[] {
  const { locations, functions } = indexOf(profile);
  const names: string[] = [];
  for (const locationId of sample.locationId) {
    for (const line of locations.get(Number(locationId))?.line ?? []) {
      const fn = functions.get(Number(line.functionId));
      names.push(fn ? stringAt(profile, fn.name) : '');
    }
  }
  return names;
}

/** Function name and file name of each frame of the stack, leaf first, as functionNamesOf. */
export function framesOf(profile: Profile, sample: Sample): { name: string; file: string }[] {
  const { locations, functions } = indexOf(profile);
  const frames: { name: string; file: string }[] = [];
  for (const locationId of sample.locationId) {
    for (const line of locations.get(Number(locationId))?.line ?? []) {
      const fn = functions.get(Number(line.functionId));
      frames.push(fn ? { name: stringAt(profile, fn.name), file: stringAt(profile, fn.filename) } : { name: '', file: '' });
    }
  }
  return frames;
}

/** The sample's value for the sample type named `type` (e.g. 'cpu', 'wall', 'samples'). */
export function sampleValue(profile: Profile, sample: Sample, type: string): number {
  const index = sampleTypeNames(profile).findIndex((st) => st.type === type);
  if (index === -1) {
    const known = sampleTypeNames(profile)
      .map((st) => st.type)
      .join(', ');
    throw new Error(`profile has no sample type ${JSON.stringify(type)} (has: ${known})`);
  }
  return Number(sample.value[index] ?? 0);
}

export interface SpanLink {
  /** The span id the server would store with the sample, if any. */
  spanId: string | undefined;
  /** A trace_id label in trace-id form, if any (the server keeps it only as a series label). */
  traceId: string | undefined;
}

/** Which span-linking labels of `sample` the server would accept. */
export function spanLinkOf(profile: Profile, sample: Sample): SpanLink {
  let spanId: string | undefined;
  let traceId: string | undefined;
  for (const label of sample.label) {
    const key = stringAt(profile, label.key);
    const value = stringAt(profile, label.str);
    if (spanId === undefined && (key === SPAN_ID_LABEL || key === PROFILE_ID_LABEL) && isValidSpanId(value)) {
      spanId = value;
    }
    if (traceId === undefined && key === TRACE_ID_LABEL && isValidTraceId(value)) traceId = value;
  }
  return { spanId, traceId };
}

export interface SampleView extends SpanLink {
  /** Function names, leaf first. */
  stack: string[];
  labels: Record<string, string>;
  /** Value per sample type name. */
  values: Record<string, number>;
}

export function sampleViewsOf(profile: Profile): SampleView[] {
  const types = sampleTypeNames(profile);
  return profile.sample.map((sample) => ({
    stack: functionNamesOf(profile, sample),
    labels: labelsOf(profile, sample),
    values: Object.fromEntries(types.map((st, i) => [st.type, Number(sample.value[i] ?? 0)])),
    ...spanLinkOf(profile, sample),
  }));
}
