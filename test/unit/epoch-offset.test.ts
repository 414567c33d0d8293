/**
 * A sample's time comes back to the monotonic clock through the epoch's lead over it, read after
 * every stop. Whatever runs between the clock reads — a preemption, a garbage collection — must
 * not move every sample of the tree by that long.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Clocks, epochOffsetMicros } from '../../src/profiling/epoch-offset.js';

/** The epoch led the monotonic clock by this much (ms), with a fraction of a millisecond as real clocks have. */
const LEAD_MS = 1_700_000_000_000.4;

/**
 * Clocks that advance by `steps` (ms) from one read to the next, whichever clock is read: step i is
 * the time between read i and read i + 1, so a long step sits between two reads.
 */
function clocks(steps: readonly number[]): Clocks & { reads: number } {
  let now = 5_000;
  let reads = 0;
  const tick = () => {
    const at = now;
    now += steps[reads] ?? 0.001;
    reads++;
    return at;
  };
  const fake = {
    reads: 0,
    monotonic: () => {
      fake.reads++;
      return tick();
    },
    epoch: () => {
      fake.reads++;
      return Math.floor(tick() + LEAD_MS);
    },
  };
  return fake;
}

describe('the epoch’s lead over the monotonic clock', () => {
  const cases = [
    { why: 'read back to back', steps: [] },
    { why: 'a 20 ms pause between the monotonic read and the epoch’s', steps: [20] },
    { why: 'a 20 ms pause between the epoch’s read and the monotonic one', steps: [0.001, 20] },
    { why: 'pauses in the first two tries', steps: [0.001, 15, 0.001, 30, 0.001] },
  ];
  for (const c of cases) {
    it(`is within half a millisecond of the truth, ${c.why}`, () => {
      const offset = epochOffsetMicros(clocks(c.steps));
      assert.ok(Math.abs(offset - LEAD_MS * 1000) <= 500 + 10, `${offset - LEAD_MS * 1000} µs off`);
    });
  }

  it('stops trying once a read is tight', () => {
    const fake = clocks([]);
    epochOffsetMicros(fake);
    assert.equal(fake.reads, 3);
  });
});
