/** What the diff page shows now: the profile type, the view, the zoom. */
import type { PerSpanType } from '../../../profiling/profile-types.js';
import { data } from './data.js';

export const state: { kind: PerSpanType; view: number; zoom: number } = {
  kind: 'cpu',
  /** Into data.endpoints, or -1 for the whole process; the endpoint that changed most first (compareRuns puts it first). */
  view: data.endpoints.length > 0 ? 0 : -1,
  /** The node the flame graph is zoomed into (0: the root). */
  zoom: 0,
};
