import { nodeZlib } from '../util/builtins.js';
import { gzipSync } from '../util/gzip.js';
import { type PprofFormat, type Profile, pprofFormat } from './pprof-format.js';

type Input = NonNullable<ConstructorParameters<PprofFormat['Profile']>[0]>;
type Each<K extends keyof Input> = NonNullable<Input[K]> extends (infer T)[] ? T : never;

/**
 * One pprof profile holding the samples of `profiles` (one sample type layout, e.g. the CPU
 * windows of one run, oldest first): functions, locations and mappings shared by value, samples of
 * the same stack and labels summed, the labels named in `dropLabels` removed first (so that
 * samples that differed only by them merge too). It covers from the first profile's start for the
 * sum of their durations. Used to thin older profile windows of a recording in place of deleting
 * them (export/local/window-merge.ts); the pprof message is profile.proto's (github.com/google/pprof).
 */
export function mergeProfiles(profiles: readonly Profile[], dropLabels: ReadonlySet<string>): Profile {
  const { Profile: ProfileClass, StringTable } = pprofFormat();
  const [first] = profiles;
  if (first === undefined) throw new Error('no profile to merge');
  const strings = new StringTable();
  const functionIds = new Map<string, number>();
  const locationIds = new Map<string, number>();
  const mappingIds = new Map<string, number>();
  const sampleAt = new Map<string, number>();
  const text = (profile: Profile, index: number | bigint) => profile.stringTable.strings[Number(index)] ?? '';
  const own = (profile: Profile, index: number | bigint) => strings.dedup(text(profile, index));
  const mappings: Each<'mapping'>[] = [];
  const functions: Each<'function'>[] = [];
  const locations: Each<'location'>[] = [];
  const samples: { locationId: number[]; value: number[]; label: Each<'sample'>['label'] }[] = [];
  let timeNanos = Number(first.timeNanos);
  let durationNanos = 0;

  for (const profile of profiles) {
    durationNanos += Number(profile.durationNanos);
    timeNanos = Math.min(timeNanos, Number(profile.timeNanos));
    const dropped = new Set([...dropLabels].map((key) => profile.stringTable.strings.indexOf(key)).filter((index) => index > 0));
    const mappingOf = new Map<number, number>();
    for (const mapping of profile.mapping) {
      const fields = {
        memoryStart: mapping.memoryStart,
        memoryLimit: mapping.memoryLimit,
        fileOffset: mapping.fileOffset,
        filename: own(profile, mapping.filename),
        buildId: own(profile, mapping.buildId),
      };
      const key = Object.values(fields).join('\0');
      let id = mappingIds.get(key);
      if (id === undefined) {
        mappingIds.set(key, (id = mappingIds.size + 1));
        mappings.push({
          ...fields,
          id,
          hasFunctions: mapping.hasFunctions,
          hasFilenames: mapping.hasFilenames,
          hasLineNumbers: mapping.hasLineNumbers,
          hasInlineFrames: mapping.hasInlineFrames,
        });
      }
      mappingOf.set(Number(mapping.id), id);
    }
    const functionOf = new Map<number, number>();
    for (const fn of profile.function) {
      const fields = { name: own(profile, fn.name), systemName: own(profile, fn.systemName), filename: own(profile, fn.filename), startLine: fn.startLine };
      const key = Object.values(fields).join('\0');
      let id = functionIds.get(key);
      if (id === undefined) {
        functionIds.set(key, (id = functionIds.size + 1));
        functions.push({ ...fields, id });
      }
      functionOf.set(Number(fn.id), id);
    }
    const locationOf = new Map<number, number>();
    for (const location of profile.location) {
      const mappingId = mappingOf.get(Number(location.mappingId)) ?? 0;
      const line = location.line.map((l) => ({ functionId: functionOf.get(Number(l.functionId)) ?? 0, line: l.line, column: l.column }));
      const key = `${mappingId}\0${location.address}\0${line.map((l) => `${l.functionId}:${l.line}:${l.column}`).join(',')}`;
      let id = locationIds.get(key);
      if (id === undefined) {
        locationIds.set(key, (id = locationIds.size + 1));
        locations.push({ id, mappingId, address: location.address, line, isFolded: location.isFolded });
      }
      locationOf.set(Number(location.id), id);
    }
    for (const sample of profile.sample) {
      const locationId = sample.locationId.map((id) => locationOf.get(Number(id)) ?? 0);
      const label = sample.label
        .filter((l) => !dropped.has(Number(l.key)))
        .map((l) => ({
          key: own(profile, l.key),
          str: Number(l.str) === 0 ? 0 : own(profile, l.str),
          num: l.num,
          numUnit: Number(l.numUnit) === 0 ? 0 : own(profile, l.numUnit),
        }));
      const key = `${locationId.join(',')}|${label.map((l) => `${l.key}:${l.str}:${l.num}:${l.numUnit}`).join(',')}`;
      const at = sampleAt.get(key);
      if (at === undefined) {
        sampleAt.set(key, samples.length);
        samples.push({ locationId, value: sample.value.map(Number), label });
      } else {
        const values = (samples[at] as (typeof samples)[number]).value;
        sample.value.forEach((value, i) => {
          values[i] = (values[i] ?? 0) + Number(value);
        });
      }
    }
  }
  return new ProfileClass({
    stringTable: strings,
    sampleType: first.sampleType.map((type) => ({ type: own(first, type.type), unit: own(first, type.unit) })),
    periodType: first.periodType && { type: own(first, first.periodType.type), unit: own(first, first.periodType.unit) },
    period: first.period,
    defaultSampleType: Number(first.defaultSampleType) === 0 ? 0 : own(first, first.defaultSampleType),
    timeNanos,
    durationNanos,
    mapping: mappings,
    function: functions,
    location: locations,
    sample: samples,
  });
}

/** gunzip + decode each gzipped pprof body, merge (mergeProfiles), encode + gzip. Synchronous, CPU-heavy: local mode runs it in its merge thread (export/local/merge-thread.ts). */
export function mergeGzippedProfiles(bodies: readonly Uint8Array[], dropLabels: ReadonlySet<string>): Buffer {
  const { Profile: ProfileClass } = pprofFormat();
  const profiles = bodies.map((body) => ProfileClass.decode(nodeZlib().gunzipSync(body)));
  return gzipSync(mergeProfiles(profiles, dropLabels).encode());
}
