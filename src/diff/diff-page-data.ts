/**
 * What the diff page shows (diff-html.ts embeds it; src/report/page/diff/ draws it): the diff's
 * endpoints with their changes, and per endpoint and for the whole process the CPU and wall diff
 * flame graphs (flame-diff.ts) over one frame table of both runs' functions. Pure: the two models
 * and their comparison in, plain data out (no bigints, ready for JSON).
 */
import type { FrameTable, RunModel } from '../report/aggregate.js';
import type { PerSpanType } from '../profiling/profile-types.js';
import type { EndpointSides, RunDiff } from './compare-runs.js';
import { DiffFrames } from './diff-frames.js';
import { type DiffFlameTree, endpointDiffTrees, processDiffTrees } from './flame-diff.js';
import type { EndpointRequests } from './request-values.js';

export type DiffTrees = Record<PerSpanType, DiffFlameTree>;

export interface DiffPageData extends RunDiff {
  strings: string[];
  frames: FrameTable;
  trees: {
    process: DiffTrees;
    /** Parallel to `endpoints`. */
    endpoints: DiffTrees[];
  };
}

export function diffPageData(before: RunModel, after: RunModel, compared: { diff: RunDiff; sides: readonly EndpointSides[] }): DiffPageData {
  const { diff, sides } = compared;
  const frames = new DiffFrames();
  const sideOf = (model: RunModel, endpoint: EndpointRequests | undefined) =>
    endpoint === undefined ? undefined : { model, endpoint: endpoint.endpoint, requests: endpoint.requests };
  const endpoints = sides.map((side) => endpointDiffTrees(frames, sideOf(before, side.before), sideOf(after, side.after)));
  const process = processDiffTrees(frames, { model: before, requests: diff.before.requests }, { model: after, requests: diff.after.requests });
  return { ...diff, ...frames.table(), trees: { process, endpoints } };
}
