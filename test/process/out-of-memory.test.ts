/**
 * Out of memory with the heap profile on: at the heap limit the heap profile of that moment is
 * kept — written into the recording in local mode, spooled for the next start when it goes to
 * Pyroscope's /ingest or over OTLP —
 * and the app dies exactly as it would have (SIGABRT, V8's fatal error on stderr).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { runReport } from '../../src/cli/report.js';
import type { RunAggregates } from '../../src/report/aggregate.js';
import { fixture, runCli, runNode } from '../support/child.js';
import { type Receiver, startReceiver } from '../support/receiver.js';
import type { SampleView } from '../support/pprof-helpers.js';

const LEAK = 'leak_until_the_limit';
const SMALL_HEAP = '--max-old-space-size=64';
const FATAL = /FATAL ERROR: .*JavaScript heap out of memory/;

function scratch(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'pyro-run-oom-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The share of a memory profile's in-use bytes whose stack passes through `frame`. */
function shareThrough(profile: { samples: readonly SampleView[] }, frame: string): number {
  let total = 0;
  let through = 0;
  for (const sample of profile.samples) {
    total += sample.values.inuse_space ?? 0;
    if (sample.stack.includes(frame)) through += sample.values.inuse_space ?? 0;
  }
  return total === 0 ? 0 : through / total;
}

test('local mode: the heap profile of the moment the limit was hit is in the recording, and the app dies of it as without the agent', {
  timeout: 120_000,
}, async (t) => {
  const bare = runNode([SMALL_HEAP, fixture('apps/out-of-memory.cjs')]);
  t.after(() => bare.process.kill('SIGKILL'));
  const bareExit = await bare.exit(60_000);
  assert.equal(bareExit.signal, 'SIGABRT', bare.stderr.slice(-500));
  assert.match(bare.stderr, FATAL);

  const base = scratch(t);
  const app = runCli(['--profiles', 'cpu,wall,heap', '--out', path.join(base, 'data'), 'node', SMALL_HEAP, fixture('apps/out-of-memory.cjs')], {
    env: { PYROSCOPE_FLUSH_INTERVAL_MS: '1000' },
  });
  t.after(() => app.process.kill('SIGKILL'));
  const exit = await app.exit(60_000);
  assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: bareExit.code, signal: bareExit.signal }, 'the CLI ends as the app did');
  assert.match(app.stderr, FATAL);

  const [runName] = readdirSync(path.join(base, 'data'));
  const run = path.join(base, 'data', runName!);
  const manifest = JSON.parse(readFileSync(path.join(run, 'run.json'), 'utf8')) as { outOfMemory?: { window: number } };
  assert.ok(manifest.outOfMemory, `run.json says the app ran out of memory; the CLI's stderr ended:\n${app.stderr.slice(-2000)}`);
  assert.ok(readdirSync(path.join(run, 'profiles')).includes(`${String(manifest.outOfMemory.window).padStart(6, '0')}-heap.pb.gz`));
  let json = '';
  assert.equal(runReport([run, '--json'], { stdout: (text) => void (json += text), stderr: () => undefined, cwd: base }), 0);
  const aggregates = JSON.parse(json) as RunAggregates;
  const [snapshot] = aggregates.snapshots;
  assert.ok(snapshot?.outOfMemoryAt, 'the report shows the profile of the moment the limit was hit');
  assert.equal(snapshot.window, manifest.outOfMemory.window);
  const top = snapshot.topSelf[0]!;
  assert.equal(aggregates.strings[aggregates.frames.name[top.frame]!], LEAK);
  assert.ok(top.value >= snapshot.total / 2, `${top.value} of ${snapshot.total} in ${LEAK}`);
});

/** The heap profile on, windows of a second, and the spool in `spool`: what both remote tests share. */
const heapProfileSpooledTo = (spool: string) => ({
  PYRO_RUN_SPOOL_DIR: spool,
  PYRO_RUN_PROFILES: 'cpu,wall,heap',
  PYROSCOPE_FLUSH_INTERVAL_MS: '1000',
  OTEL_TRACES_EXPORTER: 'none',
});

/** How long the next start of the app runs: enough to start, send what was kept, and end. */
const NEXT_START_ENV = { MEMORY_RUN_MS: '500', MEMORY_RETAIN_OBJECTS: '1000' };

/**
 * Starts a receiver, runs the leaking app to its death with `envFor(receiver, spool)` (spooling
 * into a fresh folder), checks the spool holds no `secret`, then starts another app of the same
 * service with the same env. Returns the receiver, the first spooled window's start, and
 * `mark(receiver)` read before the next start ran.
 */
async function dieThenStartAgain(
  t: TestContext,
  secret: string,
  envFor: (receiver: Receiver, spool: string) => Record<string, string>,
  mark: (receiver: Receiver) => number,
): Promise<{ receiver: Receiver; from: number; before: number }> {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const spool = scratch(t);
  const env: Record<string, string> = { ...envFor(receiver, spool), ...heapProfileSpooledTo(spool) };
  const dying = runCli(['node', SMALL_HEAP, fixture('apps/out-of-memory.cjs')], { env });
  t.after(() => dying.process.kill('SIGKILL'));
  assert.equal((await dying.exit(60_000)).signal, 'SIGABRT', dying.stderr.slice(-500));
  assert.match(dying.stderr, new RegExp(`the heap profile of this moment is in .*\\.spool\\.json; the next start of ${env.OTEL_SERVICE_NAME} sends it`));
  const texts = readdirSync(spool).map((name) => readFileSync(path.join(spool, name), 'utf8'));
  assert.ok(texts.length >= 1, 'the heap profile was spooled');
  assert.ok(!texts.some((text) => text.includes(secret)), 'no secret in the spool files');
  const { from } = JSON.parse(texts[0]!) as { from: number };
  const before = mark(receiver);

  const next = runCli([fixture('apps/memory.cjs')], { env: { ...env, ...NEXT_START_ENV } });
  t.after(() => next.process.kill('SIGKILL'));
  assert.equal((await next.exit()).code, 0, next.stderr);
  assert.deepEqual(readdirSync(spool), [], 'sent once: the spool is empty');
  return { receiver, from, before };
}

test('remote mode: the heap profile of the moment is spooled without secrets, and the next start sends it with its own credentials', {
  timeout: 120_000,
}, async (t) => {
  const { receiver, from, before } = await dieThenStartAgain(
    t,
    'spool-secret-token',
    (r) => ({ OTEL_SERVICE_NAME: 'oom-app', PYROSCOPE_SERVER_ADDRESS: r.url, PYROSCOPE_AUTH_TOKEN: 'spool-secret-token' }),
    (r) => r.ingests.length,
  );
  const sent = receiver.ingests.slice(before).find((ingest) => ingest.metricName === 'memory' && ingest.from === from);
  assert.ok(sent, 'the spooled profile reached /ingest');
  assert.equal(sent.seriesLabels.service_name, 'oom-app');
  assert.equal(sent.headers.authorization, 'Bearer spool-secret-token');
  assert.ok(shareThrough(sent, LEAK) >= 0.5, `share under ${LEAK}: ${shareThrough(sent, LEAK)}`);
});

test('profiles over OTLP: the heap profile of the moment is spooled without secrets, and the next start sends it over OTLP with its own headers', {
  timeout: 120_000,
}, async (t) => {
  const { receiver, from, before } = await dieThenStartAgain(
    t,
    'otlp-spool-secret',
    (r) => ({
      OTEL_SERVICE_NAME: 'oom-otlp-app',
      OTEL_EXPORTER_OTLP_ENDPOINT: r.url,
      OTEL_EXPORTER_OTLP_PROFILES_HEADERS: 'authorization=Bearer otlp-spool-secret',
      OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
      PYRO_RUN_PROFILES_EXPORTER: 'otlp',
    }),
    (r) => r.otlpProfiles.length,
  );
  // In-use bytes of the window the dying process spooled (its time is the window's start).
  const sent = receiver.otlpProfiles
    .slice(before)
    .find((profile) => Math.round(profile.timeNanos / 1e6) === from && profile.samples.some((sample) => sample.values.inuse_space !== undefined));
  assert.ok(sent, 'the spooled profile reached the OTLP endpoint');
  assert.equal(sent.serviceName, 'oom-otlp-app');
  assert.equal(sent.headers.authorization, 'Bearer otlp-spool-secret');
  assert.equal(sent.headers['content-encoding'], 'gzip');
  assert.ok(shareThrough(sent, LEAK) >= 0.5, `share under ${LEAK}: ${shareThrough(sent, LEAK)}`);
});
