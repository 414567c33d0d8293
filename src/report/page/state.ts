/** What the page shows now: the profile type, the view (whole process, an endpoint, a span, a request, an event-loop block), the thread, the zoom, the search. */
import type { ProfileKind } from '../load-run.js';
import type { PerSpanType } from '../../profiling/profile-types.js';
import { data } from './data.js';

export interface View {
  type: 'process' | 'endpoint' | 'span' | 'request' | 'block';
  /** Into data.endpoints (endpoint, request), data.slowest (span) or data.blocks.list (block); -1 for the process. */
  index: number;
}

const sampleCount = (kind: PerSpanType): number => data.share[kind].insideSamples + data.share[kind].outsideSamples;

export const state: { kind: ProfileKind; view: View; thread: number; zoom: number; search: string } = {
  // CPU first, unless only wall time was recorded.
  kind: sampleCount('cpu') === 0 && sampleCount('wall') > 0 ? 'wall' : 'cpu',
  view: { type: 'process', index: -1 },
  /** Index into data.threads, or -1 for all threads. */
  thread: -1,
  /** The node the flame graph is zoomed into (0: the root). */
  zoom: 0,
  search: '',
};
