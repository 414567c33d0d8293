/**
 * The soak in CI: 90 s of steady load while the backend flaps (healthy 12 s, 500s 10 s, healthy
 * 12 s, hangs 10 s, …), then healthy until the backlog has gone. After a 20 s warm-up, nothing may
 * grow: the bounds below are for a 70 s stretch, so a leak has to be small to hide in them — and
 * the long run (test/faults/soak.mjs, 10+ min) is there to catch the ones that do. Uploads resume in
 * every healthy phase, and SIGTERM still ends the process within the deadline.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { round } from './support/figures.js';
import { recordFigures } from './support/figures.js';
import { soak, tableHeader, tableRow } from './support/soak.js';

/**
 * Live heap (after a full GC): a leak of one small object per request (~70 B × 300 req/s) is
 * ~1.2 MB/min; the bound is 1 MB/min. Memory outside the heap holds the queued bodies, at most 32
 * requests (a few MB), so it rises in every outage and falls after: it must be back where it was
 * once the backlog has gone (settled before the first outage and after the last:
 * outsideHeapGrowth). File descriptors (our sockets are unref'd, so only /proc/self/fd sees them)
 * and handles: no net growth beyond a few in flight.
 */
const BOUNDS = { liveHeapMbPerMin: 1, outsideHeapMbPerMin: 1.5, rssMbPerMin: 20, fdsGrowth: 6, handlesGrowth: 6, loopP99MedianMs: 50 };

test('90 s of load with a flapping backend: no growth after warm-up, uploads resume, clean shutdown', { timeout: 200_000 }, async (t) => {
  t.diagnostic(tableHeader());
  const result = await soak({
    durationMs: 90_000,
    rowMs: 5000,
    warmupMs: 20_000,
    settleMs: 45_000,
    phases: [
      ['healthy', 12_000],
      ['500', 10_000],
      ['healthy', 12_000],
      ['hang', 10_000],
    ],
    onRow: (row) => t.diagnostic(tableRow(row)),
  });
  const { trends } = result;
  const summary = {
    requests: result.requests,
    rssMbPerMin: round(trends.rssMb.perMinute, 2),
    liveHeapMbPerMin: round(trends.liveHeapMb.perMinute, 3),
    outsideHeapMbPerMin: round(trends.outsideHeapMb.perMinute, 3),
    outsideHeapSettledMbPerMin: round(result.outsideHeapGrowth.perMinute, 3),
    outsideHeapSettled: [result.outsideHeapGrowth.from, result.outsideHeapGrowth.to],
    fds: [trends.fds.min, trends.fds.max, trends.fds.last],
    handles: [trends.handles.min, trends.handles.max, trends.handles.last],
    loopP99MedianMs: round(result.loopP99MedianMs),
    loopMaxMs: round(result.loopMaxMs),
    healthyPhases: result.healthyPhases,
    healthyPhasesWithoutDelivery: result.healthyPhasesWithoutDelivery,
    shutdownMs: result.shutdown.ms,
  };
  t.diagnostic(`verdict inputs: ${JSON.stringify(summary)}`);
  recordFigures('soak-short.jsonl', { ...summary, rows: result.rows });

  assert.deepEqual({ code: result.shutdown.code, signal: result.shutdown.signal }, { code: null, signal: 'SIGTERM' });
  assert.ok(result.shutdown.ms < 3000 + 2500, `SIGTERM took ${result.shutdown.ms} ms (deadline 3000 ms)`);
  assert.equal(result.healthyPhasesWithoutDelivery, 0, `uploads resumed in every healthy phase (${result.healthyPhases})`);
  assert.ok(trends.liveHeapMb.perMinute < BOUNDS.liveHeapMbPerMin, `live heap grows ${summary.liveHeapMbPerMin} MB/min`);
  assert.ok(
    result.outsideHeapGrowth.perMinute < BOUNDS.outsideHeapMbPerMin,
    `memory outside the heap, settled before the first outage and after the last, grows ${summary.outsideHeapSettledMbPerMin} MB/min`,
  );
  assert.ok(trends.rssMb.perMinute < BOUNDS.rssMbPerMin, `RSS grows ${summary.rssMbPerMin} MB/min`);
  assert.ok(trends.fds.last - trends.fds.min <= BOUNDS.fdsGrowth, `file descriptors grew: ${summary.fds.join(' / ')} (min / max / last)`);
  assert.ok(trends.handles.last - trends.handles.min <= BOUNDS.handlesGrowth, `handles grew: ${summary.handles.join(' / ')} (min / max / last)`);
  assert.ok(result.loopP99MedianMs < BOUNDS.loopP99MedianMs, `event-loop delay p99 (median over seconds) ${summary.loopP99MedianMs} ms`);
  // Each failure mode is one warning per pipeline until it recovers; it may come back once per outage.
  const perOutage = result.warnings.filter((w) => /upload/.test(w)).length;
  assert.ok(perOutage <= 2 * 4 + 2, `warnings stay one per pipeline per outage: ${perOutage}\n${result.warnings.join('\n')}`);
});
