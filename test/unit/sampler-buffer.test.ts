/**
 * The native sampler drops every sample it has no record for, and its records are only freed when
 * it is stopped — which a stalled event loop cannot do. What its buffer keeps, and how a stall
 * that outlasted it is told.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { STALL_KEPT, Sampler, sampleBuffer } from '../../src/profiling/sampler.js';

const keptMs = (windowMs: number, intervalMicros: number) => (sampleBuffer(windowMs, intervalMicros).records * intervalMicros) / 1000;

describe('what the sampler’s buffer keeps between two stops', () => {
  const cases = [
    { why: 'the default window and interval: five minutes of stall', windowMs: 15_000, intervalMicros: 10_000, ms: STALL_KEPT.ms },
    { why: 'short windows keep as long a stall', windowMs: 1_000, intervalMicros: 2_000, ms: STALL_KEPT.ms },
    { why: 'the finest interval: as many records as the cap allows', windowMs: 1_000, intervalMicros: 100, ms: (STALL_KEPT.records * 100) / 1000 },
    { why: 'never fewer than two windows', windowMs: 600_000, intervalMicros: 10_000, ms: 1_200_000 },
  ];
  for (const c of cases) {
    it(`${c.windowMs} ms windows, ${c.intervalMicros} µs apart → ${c.ms / 1000} s (${c.why})`, () => {
      // The native side takes whole milliseconds: two of kept time at most above what was asked.
      const kept = keptMs(c.windowMs, c.intervalMicros);
      assert.ok(kept >= c.ms && kept <= c.ms + 2, `${kept} ms kept`);
    });
  }
});

/** Keeps the thread on the CPU for `ms`. */
function burn(ms: number): void {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x += Math.sqrt(x + 1);
  assert.ok(x > 0);
}

it('a stop after a stall longer than the buffer keeps says samples were dropped; the next stop, after a short run, does not', {
  skip: process.platform === 'win32',
}, () => {
  // 200 records at 1 ms: 200 ms kept.
  const sampler = new Sampler({
    intervalMicros: 1_000,
    windowMillis: 50,
    keep: { ms: 200, records: 200 },
    withContexts: true,
    collectCpuTime: false,
    useFrame: false,
  });
  sampler.start();
  try {
    assert.equal(sampler.keepsMillis, 200);
    burn(600);
    sampler.stop(true);
    assert.equal(sampler.droppedAtLastStop, true);
    burn(100);
    sampler.stop(true);
    assert.equal(sampler.droppedAtLastStop, false);
  } finally {
    sampler.stop(false);
  }
});

it('samplesTaken counts the samples recorded with a context: it moves as they are taken and at every stop, never back, and stays once stopped', {
  skip: process.platform === 'win32',
}, () => {
  const sampler = new Sampler({ intervalMicros: 1_000, windowMillis: 50, withContexts: true, collectCpuTime: false, useFrame: false });
  assert.equal(sampler.samplesTaken(), 0, 'before it starts');
  sampler.start();
  const seen = [sampler.samplesTaken()];
  try {
    burn(30);
    seen.push(sampler.samplesTaken());
    sampler.stop(true);
    seen.push(sampler.samplesTaken());
    sampler.stop(true);
    seen.push(sampler.samplesTaken());
  } finally {
    sampler.stop(false);
  }
  const stopped = sampler.samplesTaken();
  const [atStart, afterBurn, afterStop, afterEmptyStop] = seen as [number, number, number, number];
  assert.ok(afterBurn > atStart, `30 ms at 1 ms took samples: ${atStart} → ${afterBurn}`);
  assert.ok(afterStop > afterBurn, `a stop moves the count: ${afterBurn} → ${afterStop}`);
  assert.ok(afterEmptyStop > afterStop, `so does a stop right after another: ${afterStop} → ${afterEmptyStop}`);
  burn(10);
  assert.equal(sampler.samplesTaken(), stopped, 'nothing moves it once sampling ended');
});
