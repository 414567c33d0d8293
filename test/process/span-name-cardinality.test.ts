/**
 * span_name stays a bounded set whatever the app names its root spans: Pyroscope makes each value
 * a series, and past its active-series limit it refuses the tenant's profiles — every service's.
 * A job worker naming 80 000 root spans `process order <n>`: one span_name over the run, one local
 * endpoint counting every job; names no shaping can fold: at most the cap per window, the rest
 * under the overflow value, one warning.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, runCli } from '../support/child.js';
import { linkedEnv } from '../support/linking.js';
import { readRecording } from '../support/read-recording.js';
import { startReceiver } from '../support/receiver.js';
import { scratchDirs } from '../support/scratch.js';

const JOBS = 80_000;
const { fresh: tempDir } = scratchDirs('pyro-run-span-names-');

test('80 000 root spans named "process order <n>" are sent under one span_name, their spans keep their names, no upload refused', async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const app = runCli([fixture('apps/order-jobs.cjs')], { env: { OTEL_SERVICE_NAME: 'order-jobs', JOBS: String(JOBS), ...linkedEnv(receiver) } });
  t.after(() => app.process.kill('SIGKILL'));
  assert.equal((await app.exit(120_000)).code, 0, app.stderr);

  const ingests = receiver.requests.filter((request) => request.endpoint === 'ingest');
  assert.deepEqual(
    ingests.filter((request) => request.status !== 200).map((request) => `${request.status} ${request.error}`),
    [],
    'no upload refused',
  );
  const windows = new Set(receiver.ingests.map((ingest) => ingest.from));
  assert.ok(windows.size >= 2, `the run spans several windows: ${windows.size}`);
  const names = new Set(receiver.ingests.flatMap((ingest) => ingest.samples.map((sample) => sample.labels.span_name)).filter((name) => name !== undefined));
  assert.deepEqual([...names], ['process order {id}'], 'one span_name over the run');
  const hot = receiver.ingests.flatMap((ingest) => ingest.samples).filter((sample) => sample.stack.includes('hot_process_order'));
  assert.ok(hot.length > 0, 'the jobs were profiled');
  const byId = new Map(receiver.spans.map((span) => [span.spanId, span.name]));
  for (const sample of hot.filter((s) => s.labels.span_id !== undefined && byId.has(s.labels.span_id))) {
    assert.match(byId.get(sample.labels.span_id!)!, /^process order \d+$/, 'the span itself keeps its name');
  }
  assert.doesNotMatch(app.stderr, /distinct span names/, 'folded names stay under the cap: no warning');
});

test('names no shaping folds: at most the cap per window, the overflow value among them, one warning naming the setting', async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const env = { OTEL_SERVICE_NAME: 'order-words', JOBS: '30000', NAMES: 'words', WORDS: '500', PYRO_RUN_MAX_SPAN_NAMES: '20', ...linkedEnv(receiver) };
  const app = runCli([fixture('apps/order-jobs.cjs')], { env });
  t.after(() => app.process.kill('SIGKILL'));
  assert.equal((await app.exit(120_000)).code, 0, app.stderr);

  assert.ok(receiver.ingests.length > 0);
  let overflowed = 0;
  for (const ingest of receiver.ingests) {
    const names = new Set(ingest.samples.map((sample) => sample.labels.span_name).filter((name) => name !== undefined));
    assert.ok(names.size <= 20, `window ${ingest.from} ${ingest.metricName}: ${names.size} span names`);
    for (const sample of ingest.samples) {
      if (sample.labels.span_name !== '(other span names)') continue;
      overflowed++;
      assert.match(sample.labels.span_id ?? '', /^[0-9a-f]{16}$/, 'an overflowed sample keeps its span_id');
    }
  }
  assert.ok(overflowed > 0, 'some samples went to the overflow value');
  const warnings = app.stderr.match(/warning: more than 20 distinct span names in one profile window \(past them: "process order [a-z]+"/g) ?? [];
  assert.equal(warnings.length, 1, app.stderr);
  assert.match(app.stderr, /raise PYRO_RUN_MAX_SPAN_NAMES \(--max-span-names\)/);
});

test('local mode: 80 000 jobs named "process order <n>" are one endpoint with an exact count', async (t) => {
  const out = tempDir();
  const app = runCli(['--out', out, fixture('apps/order-jobs.cjs')], { env: { JOBS: String(JOBS), PYROSCOPE_FLUSH_INTERVAL_MS: '1000' } });
  t.after(() => app.process.kill('SIGKILL'));
  assert.equal((await app.exit(120_000)).code, 0, app.stderr);

  const run = readRecording(out);
  const jobs = run.manifest.endpoints.filter((endpoint) => endpoint.name.startsWith('process order'));
  assert.deepEqual(
    jobs.map((endpoint) => [endpoint.name, endpoint.count]),
    [['process order {id}', JOBS]],
  );
  const names = new Set(run.profiles.flatMap((profile) => profile.samples.map((sample) => sample.labels.span_name)).filter((name) => name !== undefined));
  assert.deepEqual([...names], ['process order {id}']);
});
