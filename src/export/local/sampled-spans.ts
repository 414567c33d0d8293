import type { ProfileWindow } from '../../profiling/profiler.js';
import { LABEL_SPAN_ID } from '../../wire.js';

/**
 * How long the span IDs of a window's samples are looked up: a root's span reaches the recorder up
 * to a span batch's delay after it ended, possibly windows later.
 */
const SAMPLED_IDS_KEPT_MS = 60_000;

/** The span IDs the samples of the recent profile windows are labelled with (SpanKeeper.sampled asks). */
export class SampledSpans {
  private recent: { untilMs: number; ids: ReadonlySet<string> }[] = [];

  /** Remembers `windows`' span IDs, and forgets those of windows SAMPLED_IDS_KEPT_MS older than the newest. */
  add(windows: readonly ProfileWindow[]): void {
    for (const window of windows) this.recent.push({ untilMs: window.until, ids: sampledIdsOf(window) });
    const newest = Math.max(...this.recent.map((w) => w.untilMs));
    this.recent = this.recent.filter((w) => w.untilMs >= newest - SAMPLED_IDS_KEPT_MS);
  }

  has(spanId: string): boolean {
    return this.recent.some((w) => w.ids.has(spanId));
  }
}

/** The span IDs a window's samples were labelled with, once it is built. */
function sampledIdsOf(window: ProfileWindow): Set<string> {
  const ids = new Set<string>();
  for (const part of window.parts) for (const labels of part.labelled ?? []) ids.add(labels.toLabels(false)[LABEL_SPAN_ID]!);
  return ids;
}
