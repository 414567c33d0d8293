import { nodeFs } from '../../util/builtins.js';
import type { ProfileType } from '../../config/index.js';
import { mergeGzippedProfiles } from '../../profiling/profile-merge.js';
import { LABEL_SPAN_ID, LABEL_TRACE_ID } from '../../wire.js';

/**
 * What thinning takes from the samples of merged windows: the span, not the endpoint (span_name
 * stays), so samples of the same stack and endpoint merge into one.
 */
const THINNED_LABELS: ReadonlySet<string> = new Set([LABEL_SPAN_ID, LABEL_TRACE_ID]);

/** One gzipped pprof of a window: a file on disk, or the bytes of a window not written yet. */
export type WindowPart = { type: ProfileType; file: string } | { type: ProfileType; body: Uint8Array };

export interface MergedProfile {
  type: ProfileType;
  body: Uint8Array;
}

/**
 * The parts of two windows, the older's first, merged into one profile per type
 * (profile-merge.ts, without span labels), the types in the order they first come. CPU-heavy:
 * run in the merge thread (merge-thread.ts), or on the app's thread only when that cannot start.
 */
export function mergeWindowParts(parts: readonly WindowPart[]): MergedProfile[] {
  const bodies = parts.map((part) => ({ type: part.type, body: 'file' in part ? (nodeFs().readFileSync(part.file) as Uint8Array) : part.body }));
  return [...new Set(bodies.map((part) => part.type))].map((type) => ({
    type,
    body: mergeGzippedProfiles(
      bodies.filter((part) => part.type === type).map((part) => part.body),
      THINNED_LABELS,
    ),
  }));
}
