// Pyroscope's label limits, as its distributor applies them to every series a profile makes
// (grafana/pyroscope pkg/validation/validate.go ValidateLabels, defaults from pkg/validation
// limits.go): the samples are grouped by their labels but the per-sample ones (span_id, and since
// Pyroscope 2.1.0 trace_id, grafana/pyroscope#5220), each group's series labels are the upload's
// plus the group's, and one group that breaks a limit rejects the whole upload.
import type { Profile } from 'pprof-format';
import { labelsOf } from './pprof-helpers.js';

export const MAX_LABEL_NAMES_PER_SERIES = 30;
export const MAX_LABEL_NAME_LENGTH = 1024;
export const MAX_LABEL_VALUE_LENGTH = 2048;
/** ValidateProfile's bounds on one uploaded profile, whole, before it is split into series (max_profile_size_bytes, max_profile_stacktrace_samples). */
export const MAX_PROFILE_SIZE_BYTES = 4 * 1024 * 1024;
export const MAX_PROFILE_STACKTRACE_SAMPLES = 16_000;
/** Kept per sample, not made series of (pkg/model/pprofsplit: GroupSamplesWithoutLabels); this models Pyroscope 2.1+. */
const PER_SAMPLE = new Set(['span_id', 'trace_id']);

/** Why Pyroscope would reject the upload, in its words; undefined when it would take it. */
export function seriesLimitError(series: Record<string, string>, profile: Profile): string | undefined {
  const seen = new Set<string>();
  for (const sample of profile.sample) {
    const labels = { ...series };
    for (const [key, value] of Object.entries(labelsOf(profile, sample))) if (!PER_SAMPLE.has(key)) labels[key] = value;
    const key = JSON.stringify(Object.entries(labels).sort());
    if (seen.has(key)) continue;
    seen.add(key);
    const text = `{${Object.entries(labels)
      .map(([k, v]) => `${k}="${v}"`)
      .join(', ')}}`;
    const names = Object.keys(labels);
    if (names.length > MAX_LABEL_NAMES_PER_SERIES) return `profile series '${text}' has ${names.length} label names; limit ${MAX_LABEL_NAMES_PER_SERIES}`;
    for (const [name, value] of Object.entries(labels)) {
      if (Buffer.byteLength(name) > MAX_LABEL_NAME_LENGTH) return `profile with labels '${text}' has label name too long: '${name}'`;
      if (Buffer.byteLength(value) > MAX_LABEL_VALUE_LENGTH) return `profile with labels '${text}' has label value too long: '${value}'`;
    }
  }
  return undefined;
}

/** Why ValidateProfile would refuse the whole profile (its size uncompressed, its samples), in its words; undefined when it would take it. */
export function profileLimitError(series: Record<string, string>, profile: Profile, uncompressedSize: number): string | undefined {
  const text = `{${Object.entries(series)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}="${v}"`)
    .join(', ')}}`;
  if (uncompressedSize > MAX_PROFILE_SIZE_BYTES)
    return `the profile with labels '${text}' exceeds the size limit (max_profile_size_byte, actual: ${uncompressedSize}, limit: ${MAX_PROFILE_SIZE_BYTES})`;
  if (profile.sample.length > MAX_PROFILE_STACKTRACE_SAMPLES)
    return `the profile with labels '${text}' exceeds the samples count limit (max_profile_stacktrace_samples, actual: ${profile.sample.length}, limit: ${MAX_PROFILE_STACKTRACE_SAMPLES})`;
  return undefined;
}
