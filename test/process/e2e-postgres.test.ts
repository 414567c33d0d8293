/**
 * A real database end to end: the express + PostgreSQL example (examples/express-postgres) run
 * through the CLI against a throwaway PostgreSQL and the test receiver, loaded, then stopped with
 * SIGTERM. The pg query spans must sit under their request's HTTP span, the report's JavaScript
 * must be labelled with that span, and the pg client's own frames must show up under it.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { repoRoot, runCli } from '../support/child.js';
import { assertLinked, linkedEnv, serverSpans } from '../support/linking.js';
import { serveThenTerminate } from '../support/load.js';
import { startPostgres } from '../support/postgres.js';
import { framesOf } from '../support/pprof-helpers.js';
import { type DecodedSpan, type IngestRecord, OtlpSpanKind, type Receiver, type SampleView, startReceiver } from '../support/receiver.js';
import { skipUnless } from '../support/installed.js';

/** The example's package.json name, which pyro-run takes as service.name when nothing else is set. */
const SERVICE = 'shop-postgres';
const APP = path.join(repoRoot, 'examples/express-postgres/server.mjs');
const ROUTE = '/reports/revenue';
/** Enough for the reading of pg's replies to get a judgeable number of CPU samples (≥ 50, see below) on a loaded machine. */
const REQUESTS = 100;
const IN_FLIGHT = 4;
/** Span times (hrtime-based) and window bounds (Date.now()) come from different clocks. */
const CLOCK_SLACK_NS = 100_000_000n;

interface Frame {
  name: string;
  file: string;
}

interface StackSample {
  ingest: IngestRecord;
  view: SampleView;
  /** The stack with file names, leaf first (SampleView only has function names). */
  frames: Frame[];
}

function samplesOf(ingests: readonly IngestRecord[]): StackSample[] {
  return ingests.flatMap((ingest) => ingest.samples.map((view, i) => ({ ingest, view, frames: framesOf(ingest.profile, ingest.profile.sample[i]!) })));
}

/** Code of the pg package itself (pg-protocol, pg-pool and pg-types are its own packages). */
const isPgFrame = (frame: Frame) => frame.file.includes('/node_modules/pg/');

/**
 * pg-protocol's Parser.parse, what a connection's socket 'data' handler runs on each chunk of a
 * reply: it parses the messages and calls pg back on each (a row's handling and type parsing,
 * Result.parseRow, included).
 */
const isReplyReading = (frame: Frame) => frame.name === 'parse' && frame.file.includes('/node_modules/pg-protocol/dist/parser.js');

const isPostgresClientSpan = (span: DecodedSpan) =>
  span.kind === OtlpSpanKind.Client && (span.attributes['db.system.name'] === 'postgresql' || span.attributes['db.system'] === 'postgresql');

/** The span's local root, following parents within the exported spans. */
function rootOf(span: DecodedSpan, byId: Map<string, DecodedSpan>): DecodedSpan {
  let current = span;
  for (let parent = byId.get(current.parentSpanId); parent; parent = byId.get(current.parentSpanId)) current = parent;
  return current;
}

/** Whether the span was running at some point of the profile window. */
function aliveDuring(span: DecodedSpan, ingest: IngestRecord): boolean {
  const from = BigInt(ingest.from) * 1_000_000n - CLOCK_SLACK_NS;
  const until = BigInt(ingest.until) * 1_000_000n + CLOCK_SLACK_NS;
  return span.startTimeUnixNano <= until && span.endTimeUnixNano >= from;
}

/** Why samples carry no running request: unlabelled, another span's id, or a request outside the window (by how far). */
function wrongKinds(wrong: StackSample[], requestById: Map<string, DecodedSpan>): string {
  const kinds = new Map<string, number>();
  for (const { ingest, view } of wrong) {
    const span = requestById.get(view.labels.span_id ?? '');
    let kind = view.labels.span_id === undefined ? 'unlabelled' : 'another span';
    if (span) {
      const from = BigInt(ingest.from) * 1_000_000n;
      const until = BigInt(ingest.until) * 1_000_000n;
      const offMs = span.endTimeUnixNano < from ? (from - span.endTimeUnixNano) / 1_000_000n : (span.startTimeUnixNano - until) / 1_000_000n;
      kind = `request ${offMs} ms outside the window`;
    }
    kinds.set(kind, (kinds.get(kind) ?? 0) + (view.values.samples ?? 1));
  }
  return [...kinds].map(([kind, n]) => `${n} ${kind}`).join(', ');
}

function assertQuerySpansUnderRequests(receiver: Receiver, requests: DecodedSpan[], listeningAt: bigint): void {
  const byId = new Map(receiver.spans.map((span) => [span.spanId, span]));
  const requestIds = new Set(requests.map((span) => span.spanId));
  const queries = receiver.spans.filter(isPostgresClientSpan);
  for (const span of queries) {
    const root = rootOf(span, byId);
    assert.equal(root.traceId, span.traceId);
    // Outside requests, only the example's schema check and seeding, before it listened.
    if (!requestIds.has(root.spanId))
      assert.ok(span.endTimeUnixNano <= listeningAt + CLOCK_SLACK_NS, `${span.name} outside any request, after start: root ${root.name}`);
  }
  for (const request of requests) {
    const reports = queries.filter(
      (span) =>
        rootOf(span, byId) === request && /FROM orders o JOIN order_items/.test(String(span.attributes['db.query.text'] ?? span.attributes['db.statement'])),
    );
    assert.equal(reports.length, 1, `request ${request.spanId}: one revenue query span under it, got ${reports.length}`);
  }
}

test('express + pg through the CLI: query spans under the request, report CPU and pg frames labelled with it', {
  timeout: 180_000,
  skip: skipUnless('postgresql'),
}, async (t) => {
  const db = await startPostgres();
  t.after(() => db.stop());
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const app = runCli([APP], {
    env: {
      DATABASE_URL: db.url,
      PORT: '0',
      ...linkedEnv(receiver),
      // Twice linkedEnv's rate: pg's row parsing is a few per cent of the CPU, and is judged below.
      PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS: '1000',
    },
  });
  // A failed step must not leave the app running: kill is a no-op once it has exited.
  t.after(() => app.process.kill('SIGKILL'));
  const listeningAt = BigInt(await serveThenTerminate(app, () => ROUTE, REQUESTS, IN_FLIGHT, 60_000)) * 1_000_000n;

  assertLinked(receiver, SERVICE);
  const requests = serverSpans(receiver);
  assert.equal(requests.length, REQUESTS);
  for (const span of requests) assert.equal(span.name, `GET ${ROUTE}`);
  assertQuerySpansUnderRequests(receiver, requests, listeningAt);

  const requestById = new Map(requests.map((span) => [span.spanId, span]));
  /** The request whose span_id the sample carries, if that request was running in the sample's window. */
  const requestOf = ({ ingest, view }: StackSample) => {
    const span = requestById.get(view.labels.span_id ?? '');
    return span !== undefined && aliveDuring(span, ingest) ? span : undefined;
  };
  const count = (samples: StackSample[]) => samples.reduce((sum, s) => sum + (s.view.values.samples ?? 1), 0);
  const samples = samplesOf(receiver.ingests);
  const cpu = samples.filter((s) => s.ingest.metricName === 'process_cpu');

  const report = cpu.filter((s) => s.view.stack.includes('buildRevenueReport'));
  const total = count(report);
  const right = count(report.filter((s) => requestOf(s) !== undefined));
  t.diagnostic(`attribution ${((right / total) * 100).toFixed(2)}%: ${right}/${total} buildRevenueReport CPU samples carry a running request's span_id`);
  assert.ok(total >= 200, `too few CPU samples in buildRevenueReport to judge: ${total}`);
  assert.ok(
    right / total >= 0.99,
    `attribution ${((right / total) * 100).toFixed(2)}% (${total - right} of ${total} samples wrong: ${wrongKinds(
      report.filter((s) => requestOf(s) === undefined),
      requestById,
    )})`,
  );

  // Traces that opened one of the pool's connections (see the row-parsing check below).
  const openers = new Set(receiver.spans.filter((span) => span.name === 'pg.connect').map((span) => span.traceId));
  const reusers = requests.filter((span) => !openers.has(span.traceId)).length;
  const pgUnderRequests = samples.filter((s) => requestOf(s) !== undefined && s.frames.some(isPgFrame));
  const ownQuery = pgUnderRequests.filter((s) => !openers.has(requestOf(s)!.traceId));
  const pgFunctions = new Set(pgUnderRequests.flatMap((s) => s.frames.filter(isPgFrame).map((f) => `${f.name} (${f.file.replace(/.*\/node_modules\//, '')})`)));
  t.diagnostic(
    `${pgUnderRequests.length} CPU/wall samples labelled with a request have pg frames (${ownQuery.length} in requests that opened no connection): ${[...pgFunctions].sort().join(', ')}`,
  );
  assert.ok(pgUnderRequests.length > 0, 'no sample labelled with a request span has frames from node_modules/pg');

  // A pooled connection's socket runs its callbacks in the async context it was opened in: pg's
  // 'data' handler, where replies are parsed and rows read, would run for the request that opened
  // the connection, whichever query's reply it is reading. pyro-run's pg hooks (src/clients/pg.ts)
  // give that work to the active query's request; test/process/e2e-pooled-clients.test.ts checks
  // it request by request. Judged on the whole of the reading, not parseRow alone, which gets a
  // tenth of its samples: too few to judge a share on.
  const reading = cpu.filter((s) => s.frames.some(isReplyReading));
  const reused = reading.filter((s) => {
    const request = requestOf(s);
    return request !== undefined && !openers.has(request.traceId);
  });
  const rowParsing = reading.filter((s) => s.frames.some((f) => isPgFrame(f) && f.name === 'parseRow'));
  t.diagnostic(
    `${count(reused)} of ${count(reading)} reply-reading CPU samples (${count(rowParsing)} in parseRow) are labelled with one of the ${reusers} requests that reused a connection`,
  );
  assert.ok(count(reading) >= 50, `too few CPU samples reading pg's replies to judge: ${count(reading)}`);
  assert.ok(count(rowParsing) > 0, 'no reply-reading sample in parseRow: the rows are not read in the socket handler');
  assert.ok(
    count(reused) / count(reading) >= 0.5,
    `only ${count(reused)} of ${count(reading)} reply-reading samples went to requests that reused a connection`,
  );
});
