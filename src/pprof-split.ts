import type { ProfileType } from './config.js';
import { SAMPLE_TYPE_COUNT, SAMPLE_TYPE_CPU, SAMPLE_TYPE_WALL } from './wire.js';

/** pprof-format's Profile as @datadog/pprof builds it (its CommonJS copy, not the ESM one). */
export type Profile = ReturnType<(typeof import('@datadog/pprof'))['time']['stop']>;

/**
 * The time profiler yields one pprof with sample types `sample/count`, `wall/nanoseconds` and
 * (with CPU time) `cpu/nanoseconds`. Pyroscope names a profile by its sample types — any `wall`
 * type makes it `wall` (grafana/pyroscope pkg/og/convert/pprof) — so the CPU view must travel as
 * its own pprof to land as `process_cpu:cpu:nanoseconds:cpu:nanoseconds`, the type Grafana's
 * traces-to-profiles shows by default. Both outputs share the source's string table, locations
 * and functions: only the sample list and the types differ.
 */
export function splitTimeProfile(source: Profile, wanted: readonly ProfileType[]): Map<ProfileType, Profile> {
  const strings = source.stringTable;
  const indexOf = (type: string) => source.sampleType.findIndex((t) => strings.strings[Number(t.type)] === type);
  const countIndex = indexOf('sample');
  const wallIndex = indexOf('wall');
  const cpuIndex = indexOf('cpu');
  const valueType = (v: { type: string; unit: string }) => ({ type: strings.dedup(v.type), unit: strings.dedup(v.unit) });
  const Ctor = source.constructor as new (input: Partial<Profile>) => Profile;
  const out = new Map<ProfileType, Profile>();

  const derive = (metricIndex: number, metricType: { type: string; unit: string }) => {
    const samples = [];
    for (const sample of source.sample) {
      const metric = Number(sample.value[metricIndex] ?? 0);
      const count = Number(sample.value[countIndex] ?? 0);
      if (metric === 0 && count === 0) continue;
      samples.push({ locationId: sample.locationId, label: sample.label, value: [count, metric] });
    }
    const metric = valueType(metricType);
    return new Ctor({
      sampleType: [valueType(SAMPLE_TYPE_COUNT), metric] as Profile['sampleType'],
      sample: samples as Profile['sample'],
      mapping: source.mapping,
      location: source.location,
      function: source.function,
      stringTable: strings,
      timeNanos: source.timeNanos,
      durationNanos: source.durationNanos,
      periodType: metric as Profile['periodType'],
      period: source.period,
    });
  };

  if (wanted.includes('cpu') && cpuIndex >= 0) {
    // A CPU sample with no CPU time (the thread was idle or blocked) is not CPU work.
    const cpu = derive(cpuIndex, SAMPLE_TYPE_CPU);
    cpu.sample = cpu.sample.filter((s) => Number(s.value[1]) > 0);
    out.set('cpu', cpu);
  }
  if (wanted.includes('wall') && wallIndex >= 0) out.set('wall', derive(wallIndex, SAMPLE_TYPE_WALL));
  return out;
}
