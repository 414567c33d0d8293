// Builds pprof profiles for tests from readable specs (function names, label
// strings) with pprof-format, the encoder @datadog/pprof itself uses.

import { Function as PprofFunction, Label, Location, Profile, Sample, StringTable, ValueType, Line } from 'pprof-format';

export interface SampleSpec {
  /** Function names, leaf first. */
  stack: string[];
  /** One value per sample type. */
  values: number[];
  labels?: Record<string, string>;
}

export interface ProfileSpec {
  /** [type, unit] pairs, e.g. [['samples', 'count'], ['cpu', 'nanoseconds']]. */
  sampleTypes: Array<[string, string]>;
  periodType?: [string, string];
  period?: number;
  timeNanos?: bigint;
  durationNanos?: bigint;
  samples: SampleSpec[];
}

export function buildProfile(spec: ProfileSpec): Profile {
  const strings = new StringTable();
  const functions = new Map<string, PprofFunction>();
  const locations = new Map<string, Location>();

  const locationFor = (name: string): Location => {
    let location = locations.get(name);
    if (location === undefined) {
      let fn = functions.get(name);
      if (fn === undefined) {
        fn = new PprofFunction({ id: functions.size + 1, name: strings.dedup(name), filename: strings.dedup('test.js') });
        functions.set(name, fn);
      }
      location = new Location({ id: locations.size + 1, line: [new Line({ functionId: fn.id })] });
      locations.set(name, location);
    }
    return location;
  };

  const samples = spec.samples.map((s) => {
    if (s.values.length !== spec.sampleTypes.length) {
      throw new Error(`sample has ${s.values.length} values for ${spec.sampleTypes.length} sample types`);
    }
    return new Sample({
      locationId: s.stack.map((name) => locationFor(name).id),
      value: s.values,
      label: Object.entries(s.labels ?? {}).map(([key, str]) => new Label({ key: strings.dedup(key), str: strings.dedup(str) })),
    });
  });

  return new Profile({
    sampleType: spec.sampleTypes.map(([type, unit]) => new ValueType({ type: strings.dedup(type), unit: strings.dedup(unit) })),
    periodType: spec.periodType ? new ValueType({ type: strings.dedup(spec.periodType[0]), unit: strings.dedup(spec.periodType[1]) }) : undefined,
    period: spec.period ?? 0,
    timeNanos: spec.timeNanos ?? 0n,
    durationNanos: spec.durationNanos ?? 0n,
    sample: samples,
    location: [...locations.values()],
    function: [...functions.values()],
    stringTable: strings,
  });
}

export function encodeProfile(spec: ProfileSpec): Uint8Array {
  return buildProfile(spec).encode();
}
