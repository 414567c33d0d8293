/**
 * What a run may hold on disk and what makes room, decided from sizes alone (no file is touched
 * here; profile-windows.ts and span-files.ts do what it says). The run's profile windows stay
 * under its cap by thinning before deleting: two neighbouring windows of the older half merged
 * into one, and only when a merge saves nothing is the oldest deleted. Spans take at most
 * SPAN_SHARE_OF_CAP of the cap and never a window's room.
 */

/**
 * The part of the run's cap span files may take: the rest is the profiles', which spans never
 * evict (the report is for the flame graphs; spans are counted into the endpoint totals anyway).
 */
export const SPAN_SHARE_OF_CAP = 0.5;

/** The run's profile windows and its cap, as they stand. */
export interface WindowBudget {
  /** Each profile window's bytes on disk, oldest first. */
  windows: readonly number[];
  /** What the run's files hold (run.json aside). */
  used: number;
  /** What they may hold: the binding cap (bindingCap). */
  cap: number;
}

/** What was tried already for the window being written. */
export interface Tried {
  /** Merging it into the only window on disk: tried once, first, and never again for it. */
  intoOnly: boolean;
  /** The last merge of two windows on disk saved nothing: the oldest goes instead. */
  mergeRefused: boolean;
}

export type WindowStep =
  /** It fits: write it. */
  | { step: 'write' }
  /** Merge it into the only window on disk, kept if that saves room and the growth fits. */
  | { step: 'merge-into-only' }
  /** Merge the windows at `at` and `at + 1` into the older one's files, kept if that saves room. */
  | { step: 'merge'; at: number }
  /** Delete the oldest window. */
  | { step: 'evict' }
  /** No window left to make room: it is not recorded. */
  | { step: 'drop' };

/** Whether `bytes` more fit. */
export function fits(budget: Pick<WindowBudget, 'used' | 'cap'>, bytes: number): boolean {
  return budget.used + bytes <= budget.cap;
}

/**
 * The next step for a window of `bytes` to be written. A window that does not fit next to the
 * only one on disk is first merged into it; otherwise room is made by merging (mergePair) and,
 * when that is not possible or saved nothing, by deleting the oldest, until the window fits or
 * there is no window left.
 */
export function nextWindowStep(budget: WindowBudget, bytes: number, tried: Tried): WindowStep {
  const room = fits(budget, bytes);
  if (!tried.intoOnly && budget.windows.length === 1 && !room) return { step: 'merge-into-only' };
  if (room) return { step: 'write' };
  if (budget.windows.length === 0) return { step: 'drop' };
  const at = tried.mergeRefused ? -1 : mergePair(budget.windows);
  return at < 0 ? { step: 'evict' } : { step: 'merge', at };
}

/**
 * Which neighbouring windows to merge (the index of the older; -1 with fewer than two): the pair
 * of the older half with the fewest bytes, the oldest on a tie, so that merges stay small and
 * the recent windows keep their spans longest.
 */
export function mergePair(windows: readonly number[]): number {
  const olderHalf = Math.max(1, Math.ceil(windows.length / 2));
  let at = -1;
  for (let i = 0; i < olderHalf && i + 1 < windows.length; i++) {
    if (at < 0 || windows[i]! + windows[i + 1]! < windows[at]! + windows[at + 1]!) at = i;
  }
  return at;
}

/** Whether a merge is kept: it must take fewer bytes than the two windows apart. */
export function mergeSaves(olderBytes: number, newerBytes: number, mergedBytes: number): boolean {
  return mergedBytes < olderBytes + newerBytes;
}

/** The cap that binds: the run's own, or the room the output folder's total cap leaves it when that is less. */
export function bindingCap(runCap: number, totalRoom: number): { bytes: number; byTotal: boolean } {
  return totalRoom < runCap ? { bytes: totalRoom, byTotal: true } : { bytes: runCap, byTotal: false };
}

/**
 * Room left for span files: their share of the run's cap less what they hold, or what the
 * profiles and run.json (`manifestRoom`) leave of the cap when that is less; `byShare` says which.
 */
export function spanRoom(capBytes: number, spanBytes: number, used: number, manifestRoom: number): { left: number; byShare: boolean } {
  const share = capBytes * SPAN_SHARE_OF_CAP - spanBytes;
  const run = capBytes - used - manifestRoom;
  return share <= run ? { left: share, byShare: true } : { left: run, byShare: false };
}
