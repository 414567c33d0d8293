// How Pyroscope names what it stores from /ingest pprof data.
// - Metric (`__name__`): RawProfile.metricName in grafana/pyroscope
//   pkg/og/convert/pprof/profile.go. Any sample type literally "wall" wins;
//   otherwise the first sample type whose display name (from the
//   sample_type_config form field, else tree.DefaultSampleTypeMapping)
//   contains "cpu" → process_cpu, "alloc_"/"inuse_"/"space"/"objects" →
//   memory, "mutex_" → mutex, "block_" → block, "goroutines" → goroutines;
//   failing all that, the last sample type's display name is used as is.
// - Profile type id per sample type: LabelsForProfile in pkg/model —
//   `<metric>:<sample type>:<sample unit>:<period type>:<period unit>`, with
//   empty period parts when the profile has no period_type.

import type { Profile } from 'pprof-format';

/** One entry of the multipart `sample_type_config` JSON (tree.SampleTypeConfig). */
export interface SampleTypeConfig {
  units?: string;
  'display-name'?: string;
  aggregation?: string;
  cumulative?: boolean;
  sampled?: boolean;
}

/**
 * tree.DefaultSampleTypeMapping (pkg/og/storage/tree), reduced to the only
 * field that affects naming: the display names. Types it lists without one
 * (inuse_*, alloc_*) are named by their own type string.
 */
export const DEFAULT_SAMPLE_TYPE_MAPPING: Readonly<Record<string, SampleTypeConfig>> = {
  samples: { 'display-name': 'cpu' },
  goroutine: { 'display-name': 'goroutines' },
  contentions: { 'display-name': 'mutex_count' },
  delay: { 'display-name': 'mutex_duration' },
};

export function stringAt(profile: Profile, index: number | bigint): string {
  return profile.stringTable.strings[Number(index)] ?? '';
}

export function sampleTypeNames(profile: Profile): Array<{ type: string; unit: string }> {
  return profile.sampleType.map((st) => ({ type: stringAt(profile, st.type), unit: stringAt(profile, st.unit) }));
}

export function metricNameOf(profile: Profile, config?: Record<string, SampleTypeConfig>): string {
  const mapping = config ?? DEFAULT_SAMPLE_TYPE_MAPPING;
  const types = sampleTypeNames(profile).map((st) => st.type);
  if (types.includes('wall')) return 'wall';
  let st = '';
  for (const type of types) {
    st = mapping[type]?.['display-name'] || type;
    if (st.includes('cpu')) return 'process_cpu';
    if (st.includes('alloc_') || st.includes('inuse_') || st === 'space' || st === 'objects') return 'memory';
    if (st.includes('mutex_')) return 'mutex';
    if (st.includes('block_')) return 'block';
    if (st.includes('goroutines')) return 'goroutines';
  }
  return st;
}

export function profileTypeIdsOf(profile: Profile, metricName: string): string[] {
  const periodType = profile.periodType ? stringAt(profile, profile.periodType.type) : '';
  const periodUnit = profile.periodType ? stringAt(profile, profile.periodType.unit) : '';
  return sampleTypeNames(profile).map(({ type, unit }) => `${metricName}:${type}:${unit}:${periodType}:${periodUnit}`);
}
