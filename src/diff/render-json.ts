/**
 * `pyro-run diff --json`: the comparison as data for tools (docs/diff.md documents the shape).
 * Durations are nanoseconds, relative changes fractions (0.19 for +19%). `format` and
 * `formatVersion` let a reader tell this from the report's JSON and from a later shape. Pure.
 */
import type { RunDiff } from './compare-runs.js';
import type { Breach, Rule } from './rules.js';

export const DIFF_FORMAT = 'pyro-run-diff';
export const DIFF_FORMAT_VERSION = 1;

export function formatDiffJson(diff: RunDiff, rules: readonly Rule[], broken: readonly Breach[]): string {
  return `${JSON.stringify({ format: DIFF_FORMAT, formatVersion: DIFF_FORMAT_VERSION, ...diff, rules: rules.map((rule) => rule.text), broken })}\n`;
}
