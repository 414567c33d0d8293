/**
 * What pyro-run labels profiles with stays within Pyroscope's limits, so no upload is rejected for
 * a label — with every other request's samples in that window (issue 16): a root span named with
 * 3000 characters among ordinary requests; a window of more samples than a profile may hold.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { fixture, runCli } from '../support/child.js';
import { assertAttributed, cpuIngests, linkedEnv } from '../support/linking.js';
import { load, serveThenTerminate } from '../support/load.js';
import { type Receiver, startReceiver } from '../support/receiver.js';

test("a span named with 3000 characters gets its name cut to Pyroscope's 2048 bytes, and no window is rejected", async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const app = runCli([fixture('apps/long-span-name.cjs')], { env: { OTEL_SERVICE_NAME: 'long-names', ...linkedEnv(receiver) } });
  t.after(() => app.process.kill('SIGKILL'));
  const port = (await app.line(/listening (\d+)/))[1];
  // The long span's requests run beside the others, so their windows hold both.
  const long = load(`http://127.0.0.1:${port}`, () => '/long', 20, 1);
  await serveThenTerminate(app, (i) => `/work/${i}`, 120, 8).catch(async (error: unknown) => {
    await long.catch(() => undefined);
    throw error;
  });
  await long;

  const ingests = receiver.requests.filter((request) => request.endpoint === 'ingest');
  assert.ok(ingests.length > 0);
  assert.deepEqual(
    ingests.filter((request) => request.status !== 200).map((request) => `${request.status} ${request.error}`),
    [],
    'no upload rejected',
  );
  const longSamples = cpuIngests(receiver)
    .flatMap((ingest) => ingest.samples)
    .filter((sample) => sample.stack.includes('hot_long'));
  assert.ok(longSamples.length > 0, "the long span's work was profiled");
  for (const sample of longSamples) {
    const name = sample.labels.span_name ?? '';
    assert.ok(
      name.startsWith('import xxx') && name.endsWith('…') && Buffer.byteLength(name) === 2048,
      `span_name cut to 2048 bytes: ${Buffer.byteLength(name)}`,
    );
  }
  assertAttributed(t, receiver);
});

/**
 * Jobs in one window (cut at exit), sampled every 100 µs: each job's span makes its samples a pprof
 * sample of their own, tens of thousands in the window. Sent to the receiver; `env` adds to it.
 */
async function manySamples(t: TestContext, env: Record<string, string> = {}): Promise<Receiver> {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const app = runCli([fixture('apps/order-jobs.cjs')], {
    env: {
      OTEL_SERVICE_NAME: 'many-samples',
      // Samples come with the thread's running time, not with a count of jobs (a fast CPU runs more
      // jobs per sample, a loaded machine runs the thread less): V8 takes about one sample per
      // 400 µs of it at a 100 µs interval, so 8 s of CPU make ~20 000, over the limit alone or
      // beside another test.
      CPU_MS: '8000',
      WORK: '6000',
      ...linkedEnv(receiver),
      PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS: '100',
      PYROSCOPE_FLUSH_INTERVAL_MS: '600000',
      ...env,
    },
  });
  t.after(() => app.process.kill('SIGKILL'));
  assert.equal((await app.exit(120_000)).code, 0, app.stderr);
  return receiver;
}

test("a window over Pyroscope's 16 000 samples reaches it as several valid profiles of that window, holding every sample", async (t) => {
  const receiver = await manySamples(t);

  const ingests = receiver.requests.filter((request) => request.endpoint === 'ingest');
  assert.deepEqual(
    ingests.filter((request) => request.status !== 200).map((request) => `${request.status} ${request.error}`),
    [],
    'no profile refused',
  );
  const cpu = cpuIngests(receiver);
  const windows = new Set(cpu.map((ingest) => `${ingest.from}-${ingest.until}`));
  assert.equal(windows.size, 1, 'one window');
  const samples = cpu.reduce((sum, ingest) => sum + ingest.profile.sample.length, 0);
  assert.ok(samples > 16_000, `the window crossed the limit: ${samples} samples`);
  assert.ok(cpu.length >= 2, `sent in pieces: ${cpu.length}`);
  for (const ingest of cpu) assert.ok(ingest.profile.sample.length <= 16_000);
  const jobs = cpu.flatMap((ingest) => ingest.samples).filter((sample) => sample.stack.includes('hot_process_order'));
  assert.ok(jobs.length > 0, "the jobs' samples arrived, with their stacks");
  assert.ok(
    jobs.every((sample) => sample.labels.span_name === 'process order {id}' && /^[0-9a-f]{16}$/.test(sample.labels.span_id ?? '')),
    'each with its labels',
  );
});

test("over OTLP, a window over Pyroscope's 16 000 samples goes as several requests whose profiles each fit, none refused", async (t) => {
  const receiver = await manySamples(t, { PYRO_RUN_PROFILES_EXPORTER: 'otlp' });

  const sent = receiver.requests.filter((request) => request.endpoint === 'profiles');
  assert.deepEqual(
    sent.filter((request) => request.status !== 200).map((request) => `${request.status} ${request.error}`),
    [],
    'no request refused',
  );
  const cpu = receiver.otlpProfiles.filter((profile) => profile.metricName === 'process_cpu');
  const samples = cpu.reduce((sum, profile) => sum + profile.samples.length, 0);
  assert.ok(samples > 16_000, `the window crossed the limit: ${samples} samples`);
  assert.ok(cpu.length >= 2 && cpu.every((profile) => profile.samples.length <= 16_000), `in pieces: ${cpu.map((p) => p.samples.length).join(', ')}`);
  assert.equal(new Set(cpu.map((profile) => profile.timeNanos)).size, 1, 'all of one window');
});
