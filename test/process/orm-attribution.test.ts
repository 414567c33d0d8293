/**
 * pg's reply parsing under an ORM: the Sequelize example (examples/express-sequelize) run through
 * the CLI against a throwaway PostgreSQL, recorded locally. Sequelize takes its pg Clients from
 * its own pool (sequelize-pool), not pg.Pool, and its model finders (count, findAll with include,
 * findOne through an association's getter) query them with a callback. Each endpoint is driven on
 * a run of its own, so every CPU sample of pg's row parsing — `Result.parseRow` (pg-types' parsers
 * under it) or pg-protocol's parser — taken while the requests ran belongs to a request of that
 * endpoint, and must carry the span_id of one of its recorded roots. Windows that began before
 * the app listened are left out: its start-up queries (sync, seed) are no request's.
 *
 * With the repository's pg, and with pg 8.16, the last before 8.17 renamed the client's
 * `activeQuery` and `queryQueue` (the names the pg hook reads), in a project of its own. Which
 * request of the endpoint a sample went to is checked request by request in e2e-pooled-clients.
 */
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test, type TestContext } from 'node:test';
import { isAgentFile } from '../support/agent-files.js';
import { repoRoot, runCli } from '../support/child.js';
import { serveThenTerminate } from '../support/load.js';
import { NPM_TIMEOUT_MS, npm } from '../support/npm.js';
import { type Postgres, startPostgres } from '../support/postgres.js';
import { framesOf } from '../support/pprof-helpers.js';
import { readRecording, type Recording } from '../support/read-recording.js';
import { OtlpSpanKind } from '../support/receiver.js';
import { scratchDirs } from '../support/scratch.js';
import { skipUnless } from '../support/installed.js';
import { aggregateRun } from '../../src/report/aggregate.js';
import { loadRunSync } from '../../src/report/load-run.js';

const APP = path.join(repoRoot, 'examples/express-sequelize/server.mjs');
const OLD_PG = '8.16.3';
const REQUESTS = 200;
const IN_FLIGHT = 4;
/** A sample a millisecond: enough for the report's view of a request. */
const SAMPLING_MICROS = 1000;
/**
 * Two a millisecond where pg's row parsing is judged: it is a few per cent of a request's CPU, and
 * at one a millisecond its samples were about three standard deviations above the 100 needed.
 */
const ROW_SAMPLING_MICROS = 500;
/** Short windows, so that most of the load falls in windows begun after the app listened. */
const FLUSH_MS = 1000;
const MIN_SAMPLES = 100;
const MIN_SHARE = 0.95;
const { fresh } = scratchDirs('pyro-run-orm-');

const installedVersion = (name: string) =>
  (JSON.parse(readFileSync(path.join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

const skip = skipUnless('postgresql');
let postgres: Postgres;
before(async () => {
  if (skip) return;
  postgres = await startPostgres();
});
after(() => postgres?.stop());

let oldPgApp: string | undefined;
/** The example in a project of its own: pg OLD_PG, and the repository's express, Sequelize and pg-hstore. */
function exampleWithOldPg(): string {
  if (oldPgApp) return oldPgApp;
  const project = fresh();
  const dependencies = Object.fromEntries(['express', 'sequelize', 'pg-hstore'].map((name) => [name, installedVersion(name)]));
  writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'blog-sequelize', private: true, type: 'module', dependencies: { ...dependencies, pg: OLD_PG } }),
  );
  npm(['install', '--no-package-lock'], project);
  copyFileSync(APP, path.join(project, 'server.mjs'));
  oldPgApp = path.join(project, 'server.mjs');
  return oldPgApp;
}

/** pg reading a reply: a Result turning a DataRow into a row, or pg-protocol's parser (not its loading, nor its serializer). */
const isRowParsing = ({ name, file }: { name: string; file: string }) =>
  (name === 'parseRow' && file.includes('/node_modules/pg/')) || /\/node_modules\/pg-protocol\/dist\/(parser|buffer-reader)\.js$/.test(file);

/** Runs `app` under the CLI, GETs `route` REQUESTS times, and reads what it recorded; with when the app listened (epoch ms). */
async function record(t: TestContext, app: string, route: string, samplingMicros = SAMPLING_MICROS): Promise<{ run: Recording; listeningAt: number }> {
  const out = fresh();
  const child = runCli(['--out', out, '--sampling-interval', String(samplingMicros), '--flush-interval', String(FLUSH_MS), app], {
    env: { DATABASE_URL: postgres.url, PORT: '0' },
  });
  t.after(() => child.process.kill('SIGKILL'));
  const listeningAt = await serveThenTerminate(child, () => route, REQUESTS, IN_FLIGHT, 60_000);
  return { run: readRecording(out), listeningAt };
}

/**
 * Of the row-parsing CPU samples in windows begun after `listeningAt`, how many carry the span_id
 * of a recorded `GET <route>` root, and what the others carry.
 */
function rowParsingAttribution(run: Recording, listeningAt: number, route: string): { total: number; right: number; others: string } {
  const rootNames = new Map(run.spans.filter((span) => span.kind === OtlpSpanKind.Server && span.parentSpanId === '').map((span) => [span.spanId, span.name]));
  let total = 0;
  let right = 0;
  const others = new Map<string, number>();
  for (const { type, samples, profile } of run.profiles) {
    if (type !== 'cpu' || BigInt(profile.timeNanos) < BigInt(listeningAt) * 1_000_000n) continue;
    profile.sample.forEach((pprofSample, i) => {
      if (!framesOf(profile, pprofSample).some(isRowParsing)) return;
      const sample = samples[i]!;
      const count = sample.values.samples ?? 1;
      total += count;
      const spanId = sample.labels.span_id;
      const name = spanId === undefined ? '(no span)' : (rootNames.get(spanId) ?? `(${sample.labels.span_name}, not a recorded request)`);
      if (name === `GET ${route}`) right += count;
      else others.set(name, (others.get(name) ?? 0) + count);
    });
  }
  return { total, right, others: [...others].map(([name, n]) => `${n} ${name}`).join(', ') || 'none' };
}

const endpoints = [
  { route: '/api/articles', what: 'N+1 (a count, findAll, then findOne and findAll per article, in sequence)' },
  { route: '/api/articles/feed', what: 'findAndCountAll with include' },
];
const pgs = [
  { pg: `pg ${installedVersion('pg')}`, app: () => APP, timeout: 180_000 },
  { pg: `pg ${OLD_PG}`, app: exampleWithOldPg, timeout: NPM_TIMEOUT_MS + 180_000 },
];

for (const { pg, app, timeout } of pgs) {
  for (const { route, what } of endpoints) {
    test(`Sequelize ${what}, ${pg}: pg's row parsing carries the span of a GET ${route} request`, { timeout, skip }, async (t) => {
      const { run, listeningAt } = await record(t, app(), route, ROW_SAMPLING_MICROS);
      const { total, right, others } = rowParsingAttribution(run, listeningAt, route);
      t.diagnostic(
        `${right} of ${total} row-parsing CPU samples (${((right / total) * 100).toFixed(1)}%) carry a GET ${route} root's span_id; others: ${others}`,
      );
      assert.ok(total >= MIN_SAMPLES, `too few CPU samples in pg's row parsing to judge: ${total}`);
      assert.ok(right / total >= MIN_SHARE, `${right} of ${total} row-parsing samples carry a GET ${route} root's span_id; others: ${others}`);
    });
  }
}

test("the report says where the N+1 endpoint's time went: its queries per request, the repeated statement flagged, database against CPU, its slowest request's waterfall", {
  timeout: 180_000,
  skip,
}, async (t) => {
  const { run } = await record(t, APP, '/api/articles');
  const aggregates = aggregateRun(loadRunSync(run.dir));
  const endpoint = aggregates.endpoints.find((e) => e.name === 'GET /api/articles');
  assert.ok(endpoint?.waits, 'the endpoint and its requests are in the report');
  const { waits } = endpoint;
  t.diagnostic(
    `${waits.requests} requests kept: ${(waits.durationNs / 1e6).toFixed(1)} ms a request, CPU ${(waits.cpuNs / 1e6).toFixed(1)} ms, database ${(waits.databaseNs / 1e6).toFixed(1)} ms in ${waits.databaseCallsP50} calls`,
  );
  assert.ok(waits.databaseCallsP50 >= 40, `queries per request: ${waits.databaseCallsP50}`);
  assert.ok(waits.databaseNs > waits.cpuNs, 'a request waits on the database more than it computes');
  const repeated = waits.calls.filter((call) => call.repeated);
  assert.ok(
    repeated.length > 0 && repeated.every((call) => call.category === 'database' && !/\d{2,}|'[^']*'/.test(call.text)),
    `the repeated statements, literals folded: ${repeated.map((call) => call.text).join(' | ')}`,
  );
  assert.ok(
    repeated.some((call) => call.perRequestMax >= 20),
    `one runs once per article: ${repeated.map((call) => call.perRequestMax).join(', ')}`,
  );
  const waterfall = waits.waterfall!;
  assert.equal(waterfall.spans[0]!.category, 'request');
  assert.ok(waterfall.spans.filter((span) => span.category === 'database').length >= 40, 'its queries in the waterfall');
  // What it lists is code a user can find: no bare anonymous function, no agent frame inside a stack.
  const name = (frame: number) => aggregates.strings[aggregates.frames.name[frame] as number] as string;
  const file = (frame: number) => aggregates.strings[aggregates.frames.file[frame] as number] as string;
  for (const self of aggregates.endpoints.flatMap((e) => e.topSelf)) assert.doesNotMatch(name(self.frame), /^\(anonymous/);
  for (const frame of new Set(aggregates.trees!.process.cpu.frame.filter((f) => f >= 0))) {
    assert.doesNotMatch(name(frame), /^\(anonymous/, file(frame));
    assert.ok(!isAgentFile(file(frame)), name(frame));
  }
});
