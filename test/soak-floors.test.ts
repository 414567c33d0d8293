/**
 * The soak judges memory outside the heap at its floor per healthy phase (healthyFloors), since
 * queued request bodies make it a sawtooth whose all-rows slope depends on where a run ends.
 * These cases pin that the floor ignores the sawtooth and still sees a leak.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { healthyFloors, type PhaseName, type SoakRow, slope } from './faults/support/soak.js';

function rows(cells: [PhaseName, number][]): SoakRow[] {
  return cells.map(([phase, mb], i) => ({
    t: (i + 1) * 5,
    phase,
    outsideHeapMb: mb,
    reqPerSec: 0,
    p99Ms: 0,
    rssMb: 0,
    liveHeapMb: 0,
    fds: 0,
    handles: 0,
    loopP99Ms: 0,
    loopMaxMs: 0,
    stored: 0,
  }));
}

const floorSlope = (r: SoakRow[]) => {
  const floors = healthyFloors(r, (row) => row.outsideHeapMb);
  return slope(
    floors.map((f) => f.t / 60),
    floors.map((f) => f.outsideHeapMb),
  );
};

// The CI run that failed on the all-rows slope (2.7 MB/min): the queue filled in each outage and a
// healthy row right after one still held the backlog.
const ciRun = rows([
  ['500', 8.72], ['500', 13.71], ['healthy', 5.28], ['healthy', 3.84], ['hang', 8.71], ['hang', 13.78],
  ['healthy', 3.85], ['healthy', 3.85], ['healthy', 4.29], ['500', 8.78], ['500', 13.89], ['healthy', 18.51],
  ['healthy', 3.85], ['hang', 8.74], ['hang', 13.84],
]);

test('a sawtooth of queued bodies over a flat floor is flat', () => {
  const all = slope(ciRun.map((r) => r.t / 60), ciRun.map((r) => r.outsideHeapMb));
  assert.ok(all > 1.5, `all rows ${all}`);
  assert.deepEqual(healthyFloors(ciRun, (r) => r.outsideHeapMb).map((r) => r.outsideHeapMb), [3.84, 3.85, 3.85]);
  assert.ok(Math.abs(floorSlope(ciRun)) < 0.05);
});

test('a leak raises the floors and shows', () => {
  const leaking = rows(ciRun.map((r) => [r.phase, r.outsideHeapMb + (r.t / 60) * 2]));
  assert.ok(Math.abs(floorSlope(leaking) - 2) < 0.1, `${floorSlope(leaking)}`);
});

test('a healthy phase of one row (its backlog not yet drained) is no floor', () => {
  const r = rows([['healthy', 4], ['healthy', 4], ['500', 9], ['healthy', 18], ['hang', 9], ['healthy', 4.1], ['healthy', 4]]);
  assert.deepEqual(healthyFloors(r, (row) => row.outsideHeapMb).map((f) => f.t), [5, 35]);
});
