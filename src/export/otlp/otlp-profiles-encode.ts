import type { HrTime } from '@opentelemetry/api';
import type { Profile } from '../../profiling/profile-window.js';
import { type ProfileType, profileTypeInfo, type ValueTypeName } from '../../profiling/profile-types.js';
import { LABEL_SPAN_ID, LABEL_TRACE_ID } from '../../wire.js';
import { attributes } from './common-encode.js';
import { nested, tag, Writer } from './proto-writer.js';

/**
 * A window's profiles as the body of an OTLP/HTTP protobuf request: ExportProfilesServiceRequest
 * of opentelemetry-proto v1.10.0 (collector/profiles/v1development/profiles_service.proto,
 * profiles/v1development/profiles.proto; v1.11.0 is the same on the wire, v1.9.0 numbered
 * Sample's fields differently). One resource, one scope, one Profile per sample type the profile
 * types' table names for OTLP (a Profile has one sample type), and one ProfilesDictionary shared by
 * all: every table starts with its zero entry, so that index 0 means "none" (a sample's
 * `link_index` 0 is no span). A sample's span is its link (trace ID and span ID, as bytes); its
 * other labels (`span_name`, `thread_name`) are sample attributes.
 *
 * Written in one pass, in steps (slices.ts): the profiles first, handing out dictionary indices as
 * they meet functions, locations, stacks, links and attributes, then the dictionary, field 2 after
 * field 1, as protobuf allows.
 */

export interface OtlpProfilesInput {
  profiles: ReadonlyMap<ProfileType, Profile>;
  /** Window bounds, epoch milliseconds. */
  from: number;
  until: number;
  /** String attributes of the resource; Pyroscope turns each into a series label, so it stays lean. */
  resource: Readonly<Record<string, string>>;
  scope: { name: string; version: string };
}

const REQUEST_RESOURCE_PROFILES = tag(1, 2);
const REQUEST_DICTIONARY = tag(2, 2);
const RESOURCE_PROFILES_RESOURCE = tag(1, 2);
const RESOURCE_PROFILES_SCOPE_PROFILES = tag(2, 2);
const RESOURCE_ATTRIBUTES = tag(1, 2);
const SCOPE_PROFILES_SCOPE = tag(1, 2);
const SCOPE_PROFILES_PROFILES = tag(2, 2);
const SCOPE_NAME = tag(1, 2);
const SCOPE_VERSION = tag(2, 2);
const PROFILE_SAMPLE_TYPE = tag(1, 2);
const PROFILE_SAMPLES = tag(2, 2);
const PROFILE_TIME = tag(3, 1);
const PROFILE_DURATION = tag(4, 0);
const PROFILE_PERIOD_TYPE = tag(5, 2);
const PROFILE_PERIOD = tag(6, 0);
const SAMPLE_STACK_INDEX = tag(1, 0);
const SAMPLE_ATTRIBUTE_INDICES = tag(2, 2);
const SAMPLE_LINK_INDEX = tag(3, 0);
const SAMPLE_VALUES = tag(4, 2);
const VALUE_TYPE_TYPE = tag(1, 0);
const VALUE_TYPE_UNIT = tag(2, 0);
const DICTIONARY_MAPPINGS = tag(1, 2);
const DICTIONARY_LOCATIONS = tag(2, 2);
const DICTIONARY_FUNCTIONS = tag(3, 2);
const DICTIONARY_LINKS = tag(4, 2);
const DICTIONARY_STRINGS = tag(5, 2);
const DICTIONARY_ATTRIBUTES = tag(6, 2);
const DICTIONARY_STACKS = tag(7, 2);
const STACK_LOCATION_INDICES = tag(1, 2);
const LOCATION_LINES = tag(3, 2);
const LINE_FUNCTION_INDEX = tag(1, 0);
const LINE_LINE = tag(2, 0);
const FUNCTION_NAME = tag(1, 0);
const FUNCTION_SYSTEM_NAME = tag(2, 0);
const FUNCTION_FILENAME = tag(3, 0);
const FUNCTION_START_LINE = tag(4, 0);
const LINK_TRACE_ID = tag(1, 2);
const LINK_SPAN_ID = tag(2, 2);
const ATTRIBUTE_KEY = tag(1, 0);
const ATTRIBUTE_VALUE = tag(2, 2);
const ANY_STRING = tag(1, 2);

/** Samples written between two points where the work may be interrupted. */
const SAMPLES_PER_STEP = 64;
const TRACE_ID_HEX = 32;
const SPAN_ID_HEX = 16;

type PprofLocation = Profile['location'][number];
type PprofFunction = Profile['function'][number];

interface FunctionEntry {
  name: number;
  systemName: number;
  filename: number;
  startLine: number;
}

/** One table of the dictionary: its entries, index 0 the zero one, and each key's index. */
class Table<K, V> {
  readonly entries: V[];
  private readonly ids = new Map<K, number>();

  /** `zeroKey`: a key that names the zero entry (the empty string of the string table). */
  constructor(zero: V, zeroKey?: K) {
    this.entries = [zero];
    if (zeroKey !== undefined) this.ids.set(zeroKey, 0);
  }

  /** The index of `key`'s entry, made (by `make`) the first time the key is met. */
  index(key: K, make: () => V): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.entries.push(make()) - 1;
      this.ids.set(key, id);
    }
    return id;
  }
}

/** A pprof the dictionary reads from: its string table and its functions by id. */
interface Source {
  strings: readonly string[];
  functions: ReadonlyMap<number, PprofFunction>;
}

/** The request's ProfilesDictionary, filled as the profiles are written; index 0 of each table is its zero entry. */
class Dictionary {
  readonly strings = new Table<string, string>('', '');
  readonly functions = new Table<PprofFunction, FunctionEntry | undefined>(undefined);
  /** Per location: its lines as [function index, line]. */
  readonly locations = new Table<PprofLocation, [number, number][]>([]);
  readonly stacks = new Table<string, number[]>([]);
  readonly links = new Table<string, [string, string]>(['', '']);
  readonly attributes = new Table<string, [number, string]>([0, '']);

  string(value: string): number {
    return this.strings.index(value, () => value);
  }

  /** A pprof location (and its functions) of `source`, whose string table its indices point into. */
  location(location: PprofLocation, source: Source): number {
    return this.locations.index(location, () =>
      location.line.map((line): [number, number] => [this.function(source.functions.get(Number(line.functionId)), source), Number(line.line)]),
    );
  }

  stack(locations: number[]): number {
    return this.stacks.index(locations.join(','), () => locations);
  }

  link(traceId: string, spanId: string): number {
    return this.links.index(`${traceId}/${spanId}`, () => [traceId, spanId]);
  }

  attribute(key: string, value: string): number {
    return this.attributes.index(`${key}\0${value}`, () => [this.string(key), value]);
  }

  private function(fn: PprofFunction | undefined, source: Source): number {
    if (fn === undefined) return 0;
    const text = (index: number | bigint) => this.string(source.strings[Number(index)] ?? '');
    return this.functions.index(fn, () => ({
      name: text(fn.name),
      systemName: text(fn.systemName),
      filename: text(fn.filename),
      startLine: Number(fn.startLine),
    }));
  }
}

/** One OTLP sample, its dictionary indices resolved. */
interface OtlpSample {
  stack: number;
  attributes: number[];
  link: number;
  value: number;
}

/** One OTLP Profile: a sample type of a pprof. */
interface OtlpProfile {
  sampleType: [number, number];
  periodType: [number, number];
  period: number;
  samples: OtlpSample[];
}

export function* encodeProfilesRequest(input: OtlpProfilesInput): Generator<void, Uint8Array> {
  const dictionary = new Dictionary();
  const profiles: OtlpProfile[] = [];
  for (const [type, pprof] of input.profiles) {
    if (pprof.sample.length > 0) yield* collect(type, pprof, dictionary, profiles);
  }
  const w = new Writer(4096);
  nested(w, REQUEST_RESOURCE_PROFILES, 3, input, profiles, resourceProfiles);
  yield;
  nested(w, REQUEST_DICTIONARY, 3, dictionary, undefined, dictionaryMessage);
  return w.buf.subarray(0, w.pos);
}

/** The OTLP profiles of one pprof, one per entry of its type's `otlp` row. */
function* collect(type: ProfileType, pprof: Profile, dictionary: Dictionary, out: OtlpProfile[]): Generator<void> {
  const strings = pprof.stringTable.strings;
  const text = (index: number | bigint | undefined) => strings[Number(index ?? 0)] ?? '';
  const locations = new Map(pprof.location.map((location) => [Number(location.id), location]));
  const source: Source = { strings, functions: new Map(pprof.function.map((fn) => [Number(fn.id), fn])) };
  const valueType = (name: ValueTypeName): [number, number] => [dictionary.string(name.type), dictionary.string(name.unit)];
  const pprofType = (index: number): ValueTypeName => ({ type: text(pprof.sampleType[index]?.type), unit: text(pprof.sampleType[index]?.unit) });
  const period = Number(pprof.period);
  const periodType = valueType({ type: text(pprof.periodType?.type), unit: text(pprof.periodType?.unit) });
  const targets = profileTypeInfo(type).otlp.map((entry) => ({
    entry,
    profile: { sampleType: valueType(entry.sampleType ?? pprofType(entry.value)), periodType, period, samples: [] } as OtlpProfile,
  }));
  let written = 0;
  for (const sample of pprof.sample) {
    const stack = dictionary.stack(sample.locationId.map((id) => dictionary.location(locations.get(Number(id))!, source)));
    let traceId = '';
    let spanId = '';
    const attributeIds: number[] = [];
    for (const label of sample.label) {
      const key = text(label.key);
      const value = text(label.str);
      if (key === LABEL_SPAN_ID) spanId = value;
      else if (key === LABEL_TRACE_ID) traceId = value;
      else if (value !== '') attributeIds.push(dictionary.attribute(key, value));
    }
    const link = spanId.length === SPAN_ID_HEX ? dictionary.link(traceId.length === TRACE_ID_HEX ? traceId : '', spanId) : 0;
    for (const { entry, profile } of targets) {
      const raw = Number(sample.value[entry.value] ?? 0);
      const value = entry.perPeriod ? (period > 0 ? Math.round(raw / period) : 0) : raw;
      if (value !== 0) profile.samples.push({ stack, attributes: attributeIds, link, value });
    }
    if (++written % SAMPLES_PER_STEP === 0) yield;
  }
  for (const { profile } of targets) if (profile.samples.length > 0) out.push(profile);
}

function resourceProfiles(w: Writer, input: OtlpProfilesInput, profiles: OtlpProfile[]): void {
  nested(w, RESOURCE_PROFILES_RESOURCE, 2, input.resource, undefined, (w2, resource) => attributes(w2, resource, RESOURCE_ATTRIBUTES));
  nested(w, RESOURCE_PROFILES_SCOPE_PROFILES, 3, input, profiles, scopeProfiles);
}

function scopeProfiles(w: Writer, input: OtlpProfilesInput, profiles: OtlpProfile[]): void {
  nested(w, SCOPE_PROFILES_SCOPE, 1, input.scope, undefined, (w2, scope) => {
    w2.tag(SCOPE_NAME);
    w2.string(scope.name);
    w2.tag(SCOPE_VERSION);
    w2.string(scope.version);
  });
  const time = hrTime(input.from);
  const durationNanos = Math.max(0, input.until - input.from) * 1_000_000;
  for (const profile of profiles) nested(w, SCOPE_PROFILES_PROFILES, 3, profile, { time, durationNanos }, profileMessage);
}

function profileMessage(w: Writer, profile: OtlpProfile, window: { time: HrTime; durationNanos: number }): void {
  nested(w, PROFILE_SAMPLE_TYPE, 1, profile.sampleType, undefined, valueTypeMessage);
  for (const sample of profile.samples) nested(w, PROFILE_SAMPLES, 1, sample, undefined, sampleMessage);
  w.tag(PROFILE_TIME);
  w.time(window.time);
  w.tag(PROFILE_DURATION);
  w.varint(window.durationNanos);
  nested(w, PROFILE_PERIOD_TYPE, 1, profile.periodType, undefined, valueTypeMessage);
  w.tag(PROFILE_PERIOD);
  w.varint(profile.period);
}

function sampleMessage(w: Writer, sample: OtlpSample): void {
  w.tag(SAMPLE_STACK_INDEX);
  w.varint(sample.stack);
  if (sample.attributes.length > 0) packed(w, SAMPLE_ATTRIBUTE_INDICES, sample.attributes);
  if (sample.link !== 0) {
    w.tag(SAMPLE_LINK_INDEX);
    w.varint(sample.link);
  }
  packed(w, SAMPLE_VALUES, [sample.value]);
}

function valueTypeMessage(w: Writer, [type, unit]: [number, number]): void {
  optionalVarint(w, VALUE_TYPE_TYPE, type);
  optionalVarint(w, VALUE_TYPE_UNIT, unit);
}

function dictionaryMessage(w: Writer, d: Dictionary): void {
  // One mapping: the zero one. JavaScript frames have no binary mapping; every location's mapping_index is 0.
  w.tag(DICTIONARY_MAPPINGS);
  w.varint(0);
  for (const lines of d.locations.entries) nested(w, DICTIONARY_LOCATIONS, 1, lines, undefined, locationMessage);
  for (const fn of d.functions.entries) nested(w, DICTIONARY_FUNCTIONS, 1, fn, undefined, functionMessage);
  for (const link of d.links.entries) nested(w, DICTIONARY_LINKS, 1, link, undefined, linkMessage);
  for (const value of d.strings.entries) {
    w.tag(DICTIONARY_STRINGS);
    w.string(value);
  }
  for (const attribute of d.attributes.entries) nested(w, DICTIONARY_ATTRIBUTES, 1, attribute, undefined, attributeMessage);
  for (const stack of d.stacks.entries)
    nested(w, DICTIONARY_STACKS, 2, stack, undefined, (w2, indices) => indices.length > 0 && packed(w2, STACK_LOCATION_INDICES, indices));
}

function locationMessage(w: Writer, lines: [number, number][]): void {
  for (const [fn, line] of lines) {
    nested(w, LOCATION_LINES, 1, fn, line, (w2, functionIndex, lineNumber) => {
      optionalVarint(w2, LINE_FUNCTION_INDEX, functionIndex);
      optionalVarint(w2, LINE_LINE, lineNumber);
    });
  }
}

function functionMessage(w: Writer, fn: FunctionEntry | undefined): void {
  if (fn === undefined) return;
  optionalVarint(w, FUNCTION_NAME, fn.name);
  optionalVarint(w, FUNCTION_SYSTEM_NAME, fn.systemName);
  optionalVarint(w, FUNCTION_FILENAME, fn.filename);
  optionalVarint(w, FUNCTION_START_LINE, fn.startLine);
}

function linkMessage(w: Writer, [traceId, spanId]: [string, string]): void {
  if (traceId !== '') {
    w.tag(LINK_TRACE_ID);
    w.hex(traceId);
  }
  if (spanId !== '') {
    w.tag(LINK_SPAN_ID);
    w.hex(spanId);
  }
}

function attributeMessage(w: Writer, [key, value]: [number, string]): void {
  if (key === 0) return;
  w.tag(ATTRIBUTE_KEY);
  w.varint(key);
  nested(w, ATTRIBUTE_VALUE, 1, value, undefined, (w2, text) => {
    w2.tag(ANY_STRING);
    w2.string(text);
  });
}

/** A packed repeated varint field (proto3's default for repeated scalars). */
function packed(w: Writer, field: number, values: readonly number[]): true {
  nested(w, field, 1, values, undefined, (w2, list) => {
    for (const value of list) w2.varint(value);
  });
  return true;
}

/** proto3 leaves a scalar at its default (0) out. */
function optionalVarint(w: Writer, field: number, value: number): void {
  if (value === 0) return;
  w.tag(field);
  w.varint(value);
}

/** Epoch milliseconds as [seconds, nanoseconds]. */
function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1_000_000)];
}
