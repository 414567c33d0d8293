/**
 * Where an endpoint's request time went, from the requests the recording holds: CPU on the app's
 * thread, the time its calls covered by what they called (a database, an HTTP service, other), the
 * calls aggregated by statement shape with a flag on one repeated in a request (N+1), and the
 * slowest request as a waterfall.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aggregateRun, type EndpointStats } from '../../src/report/aggregate.js';
import { loadRunSync } from '../../src/report/load-run.js';
import { formatSummary } from '../../src/report/summary.js';
import { nPlusOneRecording } from '../support/recording.js';
import { scratchDirs } from '../support/scratch.js';

const MS = 1_000_000;
const { fresh } = scratchDirs('pyro-run-report-waits-');
const articles = (): EndpointStats => {
  const endpoint = aggregateRun(loadRunSync(nPlusOneRecording(fresh()))).endpoints.find((e) => e.name === 'GET /articles');
  assert.ok(endpoint);
  return endpoint;
};

describe('endpoint waits', () => {
  it('splits the mean request into CPU, database, HTTP calls and neither', () => {
    const waits = articles().waits!;
    assert.equal(waits.requests, 2);
    // Requests of 37 and 57 ms: 35 and 45 ms in the database, 10 ms over HTTP in the second.
    assert.deepEqual(
      [waits.durationNs, waits.cpuNs, waits.databaseNs, waits.httpNs, waits.otherCallsNs, waits.restNs].map((ns) => ns / MS),
      [47, 5, 40, 5, 0, 0],
    );
    assert.deepEqual([waits.databaseCallsP50, waits.databaseCallsMax], [7, 9]);
  });

  it('aggregates calls by statement shape, literals folded, heaviest first, and flags one run again and again in a request', () => {
    const calls = articles().waits!.calls.map((c) => [c.category, c.text, c.count, c.perRequestP50, c.perRequestMax, c.totalNs / MS, c.repeated]);
    assert.deepEqual(calls, [
      ['database', 'SELECT "id", "name" FROM "Authors" WHERE "id" = ?', 14, 6, 8, 70, true],
      ['http', 'GET stock.internal', 1, 0, 1, 10, false],
      ['database', 'SELECT "id" FROM "Articles" LIMIT ?', 2, 1, 1, 10, false],
    ]);
  });

  it('draws the slowest request as a waterfall: its spans in start order, by depth, from its start', () => {
    const waterfall = articles().waits!.waterfall!;
    assert.equal(waterfall.durationNs, 57 * MS);
    assert.equal(waterfall.spans.length, 1 + 1 + 8 + 1);
    assert.deepEqual(waterfall.spans[0], { ...waterfall.spans[0], name: 'GET /articles', depth: 0, category: 'request', offsetNs: 0, cpuNs: 6 * MS });
    assert.deepEqual(
      waterfall.spans.slice(1).map((s) => [s.category, s.depth, s.offsetNs / MS]),
      [['database', 1, 0], ...Array.from({ length: 8 }, (_, i) => ['database', 1, 5 + 5 * i]), ['http', 1, 45]],
    );
  });

  it('an endpoint without calls is all CPU and neither', () => {
    const health = aggregateRun(loadRunSync(nPlusOneRecording(fresh()))).endpoints.find((e) => e.name === 'GET /health')!;
    assert.deepEqual([health.waits!.calls, health.waits!.databaseNs, health.waits!.restNs / MS], [[], 0, 1]);
  });

  it('the terminal summary gives one line per endpoint: CPU, the waits, the repeated statement', () => {
    const text = formatSummary(aggregateRun(loadRunSync(nPlusOneRecording(fresh())), { trees: false }));
    assert.match(
      text,
      /\n {2}GET \/articles {2}47\.0ms: CPU 5\.00ms · database 40\.0ms \(7 calls\) · HTTP calls 5\.00ms · neither 0 · repeated: "SELECT "id", "name" FROM "Authors" WHERE "id" = \?" ×8 in one request\n/,
    );
  });
});
