/**
 * The soak judges memory outside the heap between settled states (outsideHeapGrowth), since
 * queued request bodies make it a sawtooth, and a backlog may outlast a short healthy phase while
 * retries back off. These cases pin that a backlog left at the end of a phase is not read as a
 * leak, that a leak still shows, and when the settle at the end may stop.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { outsideHeapGrowth, type PhaseName, type SoakRow, settled } from '../faults/support/soak.js';

function rows(cells: [PhaseName, number, number?][]): SoakRow[] {
  return cells.map(([phase, mb, stored], i) => ({
    t: (i + 1) * 5,
    phase,
    outsideHeapMb: mb,
    stored: stored ?? 15,
    reqPerSec: 0,
    p99Ms: 0,
    rssMb: 0,
    liveHeapMb: 0,
    fds: 0,
    handles: 0,
    loopP99Ms: 0,
    loopMaxMs: 0,
  }));
}

// The CI run the floor-per-phase rule failed (9.3 MB/min): the last healthy phase ended with its
// backlog still draining (10.57 MB), then an outage; the settle rows at the end drain it.
const ciRun: [PhaseName, number, number?][] = [
  ['healthy', 4.95],
  ['healthy', 3.93],
  ['healthy', 4.03],
  ['500', 8.37, 0],
  ['500', 13.22, 0],
  ['healthy', 17.47, 0],
  ['healthy', 3.84, 46],
  ['hang', 8.1, 0],
  ['hang', 12.41, 0],
  ['healthy', 3.93, 45],
  ['healthy', 3.76],
  ['healthy', 4.36],
  ['500', 7.99, 0],
  ['500', 11.7, 0],
  ['healthy', 15.13, 0],
  ['healthy', 10.57, 46],
  ['hang', 8.22, 0],
  ['hang', 12.41, 0],
  ['settle', 12.5, 0],
  ['settle', 4.1, 60],
  ['settle', 3.95, 15],
];

test('a backlog still draining inside the phases is no leak once the end has settled', () => {
  const growth = outsideHeapGrowth(rows(ciRun));
  assert.deepEqual(growth.from, { t: 10, mb: 3.93 });
  assert.deepEqual(growth.to, { t: 105, mb: 3.95 });
  assert.ok(Math.abs(growth.perMinute) < 0.05, `${growth.perMinute}`);
});

test('a leak raises the settled end and shows', () => {
  const leaking = rows(ciRun.map(([phase, mb, stored], i) => [phase, mb + ((i + 1) * 5 * 2) / 60, stored]));
  const growth = outsideHeapGrowth(leaking);
  assert.ok(Math.abs(growth.perMinute - 2) < 0.2, `${growth.perMinute}`);
});

test('the settle goes on until the backend took requests twice and memory stopped falling', () => {
  const settle = (cells: [number, number][]) => settled(rows(cells.map(([mb, stored]) => ['settle', mb, stored])));
  assert.equal(settle([[12.5, 0]]), false, 'one row');
  assert.equal(
    settle([
      [12.5, 0],
      [12.4, 0],
    ]),
    false,
    'no retry fired yet: nothing stored',
  );
  assert.equal(
    settle([
      [12.5, 0],
      [4.1, 60],
    ]),
    false,
    'the backlog went in the last row',
  );
  assert.equal(
    settle([
      [4.1, 60],
      [3.95, 15],
    ]),
    true,
    'taken twice, and flat',
  );
  assert.equal(
    settle([
      [9.1, 30],
      [6.2, 30],
    ]),
    false,
    'still falling',
  );
});
