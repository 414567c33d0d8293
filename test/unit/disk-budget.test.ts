/**
 * The disk budget of a local recording, as rules on sizes alone: what a new profile window's room
 * is made by (a merge into the only window, a merge of the smallest older pair, the oldest
 * deleted, or the window dropped), which merges are kept, which cap binds, and the spans' room.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  bindingCap,
  fits,
  mergePair,
  mergeSaves,
  nextWindowStep,
  SPAN_SHARE_OF_CAP,
  spanRoom,
  type Tried,
  type WindowBudget,
  type WindowStep,
} from '../../src/export/local/disk-budget.js';

const fresh: Tried = { intoOnly: false, mergeRefused: false };

describe('a window is written when it fits; else room is made by merging before deleting, and it is dropped only with no window left', () => {
  const cases: { name: string; budget: WindowBudget; bytes: number; tried?: Partial<Tried>; step: WindowStep }[] = [
    { name: 'room for it: written', budget: { windows: [30, 30], used: 60, cap: 100 }, bytes: 40, step: { step: 'write' } },
    { name: 'exactly the room left: written', budget: { windows: [50], used: 50, cap: 100 }, bytes: 50, step: { step: 'write' } },
    { name: 'the first window, within the cap: written', budget: { windows: [], used: 0, cap: 100 }, bytes: 100, step: { step: 'write' } },
    {
      name: 'no room next to the only window: merged into it first',
      budget: { windows: [80], used: 80, cap: 100 },
      bytes: 30,
      step: { step: 'merge-into-only' },
    },
    {
      name: 'no room next to the only window, that merge tried: the window goes',
      budget: { windows: [80], used: 80, cap: 100 },
      bytes: 30,
      tried: { intoOnly: true },
      step: { step: 'evict' },
    },
    {
      name: 'the merge into the only window is tried only while there is one',
      budget: { windows: [40, 40], used: 80, cap: 100 },
      bytes: 30,
      step: { step: 'merge', at: 0 },
    },
    {
      name: 'no room with several windows: the smallest pair of the older half is merged',
      budget: { windows: [40, 10, 10, 40, 5, 5], used: 110, cap: 110 },
      bytes: 20,
      step: { step: 'merge', at: 1 },
    },
    {
      name: 'that merge saved nothing: the oldest goes instead',
      budget: { windows: [40, 10, 10, 40], used: 100, cap: 100 },
      bytes: 20,
      tried: { mergeRefused: true },
      step: { step: 'evict' },
    },
    { name: 'no window left and still no room: dropped', budget: { windows: [], used: 10, cap: 100 }, bytes: 120, step: { step: 'drop' } },
    {
      name: 'spans fill the room and no window is left: dropped, spans never make way',
      budget: { windows: [], used: 95, cap: 100 },
      bytes: 10,
      step: { step: 'drop' },
    },
    {
      name: 'the total cap left less than the run already holds: room is made still',
      budget: { windows: [20, 20], used: 40, cap: 30 },
      bytes: 1,
      step: { step: 'merge', at: 0 },
    },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(nextWindowStep(c.budget, c.bytes, { ...fresh, ...c.tried }), c.step));
  }
});

describe('the pair merged is the smallest neighbours of the older half, the oldest on a tie', () => {
  const cases: { name: string; windows: number[]; at: number }[] = [
    { name: 'no window: none', windows: [], at: -1 },
    { name: 'one window: none', windows: [10], at: -1 },
    { name: 'two windows: those two', windows: [10, 90], at: 0 },
    { name: 'three: the older half is two, and its second pair reaches into the newer', windows: [50, 50, 1], at: 1 },
    { name: 'the smallest pair wins over the oldest', windows: [30, 30, 5, 5, 30, 30], at: 2 },
    { name: 'a small pair in the newer half is left: recent windows keep their spans', windows: [30, 30, 30, 30, 30, 30, 1, 1], at: 0 },
    { name: 'equal pairs: the oldest', windows: [10, 10, 10, 10], at: 0 },
    { name: 'an odd count: the older half rounds up', windows: [9, 9, 9, 1, 1], at: 2 },
  ];
  for (const c of cases) {
    it(c.name, () => assert.equal(mergePair(c.windows), c.at));
  }
});

describe('a merge is kept only when it takes fewer bytes than the two windows apart', () => {
  const cases: { name: string; older: number; newer: number; merged: number; kept: boolean }[] = [
    { name: 'smaller: kept', older: 100, newer: 100, merged: 120, kept: true },
    { name: 'the same size as the two: refused', older: 100, newer: 100, merged: 200, kept: false },
    { name: 'larger than the two: refused', older: 10, newer: 10, merged: 25, kept: false },
  ];
  for (const c of cases) {
    it(c.name, () => assert.equal(mergeSaves(c.older, c.newer, c.merged), c.kept));
  }
});

describe('the cap that binds is the run’s own, or the total cap’s room when that is less', () => {
  const cases: { name: string; run: number; totalRoom: number; cap: { bytes: number; byTotal: boolean } }[] = [
    { name: 'the total cap leaves more: the run’s own', run: 100, totalRoom: 500, cap: { bytes: 100, byTotal: false } },
    { name: 'the total cap leaves as much: the run’s own', run: 100, totalRoom: 100, cap: { bytes: 100, byTotal: false } },
    { name: 'the total cap leaves less: the total’s room', run: 100, totalRoom: 60, cap: { bytes: 60, byTotal: true } },
    { name: 'no total cap (Infinity): the run’s own', run: 100, totalRoom: Number.POSITIVE_INFINITY, cap: { bytes: 100, byTotal: false } },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(bindingCap(c.run, c.totalRoom), c.cap));
  }

  it('growth fits up to the cap, not beyond', () => {
    assert.equal(fits({ used: 90, cap: 100 }, 10), true);
    assert.equal(fits({ used: 90, cap: 100 }, 11), false);
    assert.equal(fits({ used: 90, cap: 100 }, -5), true, 'a merge that shrinks a window always fits');
  });
});

describe('spans take their share of the cap at most, and never what profiles and run.json hold', () => {
  const cap = 1000;
  const share = cap * SPAN_SHARE_OF_CAP;
  const cases: { name: string; spanBytes: number; used: number; manifestRoom: number; room: { left: number; byShare: boolean } }[] = [
    { name: 'an empty run: their share', spanBytes: 0, used: 0, manifestRoom: 100, room: { left: share, byShare: true } },
    { name: 'spans wrote some: their share less that', spanBytes: 200, used: 200, manifestRoom: 100, room: { left: share - 200, byShare: true } },
    { name: 'profiles took most of the cap: what they left', spanBytes: 0, used: 800, manifestRoom: 100, room: { left: 100, byShare: false } },
    { name: 'their share used up: nothing, though the cap has room', spanBytes: share, used: share, manifestRoom: 100, room: { left: 0, byShare: true } },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(spanRoom(cap, c.spanBytes, c.used, c.manifestRoom), c.room));
  }
});
