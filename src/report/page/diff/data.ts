/**
 * The diff page's data as diff-html.ts embeds it in the `diff-data` element (src/diff/diff-page-data.ts),
 * and how the page names its frames and profile types.
 */
import type { DiffFlameTree } from '../../../diff/flame-diff.js';
import type { DiffPageData } from '../../../diff/diff-page-data.js';
import type { PerSpanType } from '../../../profiling/profile-types.js';
import { frameNames } from '../frame-names.js';

export const data = JSON.parse(document.getElementById('diff-data')!.textContent!) as DiffPageData;

export const names = frameNames(data);

/** The types the toggle switches between, in its order: each has a tree per view. */
export const KINDS: readonly PerSpanType[] = ['cpu', 'wall'];

export const KIND_TITLES: Record<PerSpanType, string> = { cpu: 'CPU', wall: 'Wall' };

/** The grey band of the colour scale: the diff's minimum effect (change-colour.ts). */
export const band = data.noise.minEffect;

/** The tree of a view: an endpoint's (its index into data.endpoints) or the process's (-1). */
export const treeOf = (view: number, kind: PerSpanType): DiffFlameTree => (view < 0 ? data.trees.process : data.trees.endpoints[view]!)[kind];
