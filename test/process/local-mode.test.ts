/**
 * Local mode through the real CLI and the example shop: what lands on disk is standard, whole,
 * linked and counted — and bounded.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { type Child, fixture, registerPath, repoRoot, runCli, runNode } from '../support/child.js';
import { load } from '../support/load.js';
import { readRecording } from '../support/read-recording.js';
import { startReceiver } from '../support/receiver.js';
import { scratchDirs } from '../support/scratch.js';

const SHOP = path.join(repoRoot, 'examples/express/server.mjs');

const { fresh: tempDir } = scratchDirs('pyro-run-local-');

async function driveShop(app: Child, requests: number): Promise<void> {
  const base = `http://127.0.0.1:${(await app.line(/listening (\d+)/))[1]}`;
  const paths = ['/search?q=red%20mug', '/products/7', '/search?q=blue%20lamp'];
  await load(base, (i) => paths[i % paths.length]!, requests, 6);
  for (let i = 0; i < CHECKOUTS; i++) {
    const checkout = await fetch(`${base}/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"items":[{"id":3,"quantity":2},{"id":9,"quantity":1}]}',
    });
    assert.equal(checkout.status, 200);
  }
}

const CHECKOUTS = 5;

test('records the example shop: standard files, linked by span_id, counted in run.json', async () => {
  const out = tempDir();
  const app = runCli(['--out', out, '--flush-interval', '1000', '--sampling-interval', '2000', SHOP], { env: { PORT: '0' } });
  await driveShop(app, 60);
  app.process.kill('SIGTERM');
  assert.equal((await app.exit()).signal, 'SIGTERM');

  const run = readRecording(out);
  assert.equal(run.manifest.service, 'shop-example', 'service name from the app’s package.json');
  assert.equal(run.manifest.complete, true);
  assert.ok(run.manifest.endedAt);
  assert.equal(
    run.manifest.pyroRunVersion,
    (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version,
    'the recording names the pyro-run that made it',
  );
  const { counts } = run.manifest;
  assert.equal(counts.profileFiles, run.profiles.length);
  assert.equal(counts.spanFiles, run.spanFiles.length);
  assert.equal(counts.spans, run.spans.length);
  assert.equal(counts.bytes, run.bytesOnDisk);
  assert.equal(counts.windows, new Set(run.profiles.map((p) => p.name.slice(0, 6))).size);
  assert.ok(counts.windows >= 1);

  // Every request is counted in its endpoint's totals; its details may have been summarised (a
  // burst of requests: the keeping rule keeps a share per endpoint and second).
  const served = run.manifest.endpoints.filter((endpoint) => endpoint.kind === 2);
  assert.equal(
    served.reduce((sum, endpoint) => sum + endpoint.count, 0),
    60 + CHECKOUTS,
    'every request is counted',
  );
  assert.equal(served.find((endpoint) => endpoint.name === 'POST /checkout')?.count, CHECKOUTS);
  const byId = new Map(run.spans.map((span) => [span.spanId, span]));
  const roots = run.spans.filter((span) => span.attributes['pyroscope.profile.id'] === span.spanId);
  const keptRequests = roots.filter((span) => span.kind === 2).length;
  assert.ok(keptRequests > 0 && keptRequests + counts.summarizedSpans >= 60 + CHECKOUTS, `kept requests are linked local roots: ${keptRequests}`);
  const counted = new Set(served.map((endpoint) => endpoint.name));
  let linked = 0;
  for (const profile of run.profiles) {
    for (const sample of profile.samples) {
      const spanId = sample.labels.span_id;
      if (spanId === undefined) continue;
      linked++;
      assert.ok(counted.has(sample.labels.span_name ?? ''), `span_name ${sample.labels.span_name} names a counted endpoint`);
      // A request whose samples a window holds is in the recording, summarised or not.
      const span = byId.get(spanId);
      assert.ok(span, `span_id ${spanId} names a recorded span`);
      assert.equal(span.attributes['pyroscope.profile.id'], spanId);
      assert.equal(sample.labels.trace_id, span.traceId, 'local mode labels trace_id too');
    }
  }
  assert.ok(linked > 0);
  const checkoutCpu = run.profiles
    .filter((p) => p.type === 'cpu')
    .flatMap((p) => p.samples)
    .filter((s) => s.stack.includes('priceCart'));
  assert.ok(checkoutCpu.length > 0, 'priceCart shows up in the CPU profile');
  for (const sample of checkoutCpu) assert.equal(byId.get(sample.labels.span_id ?? '')?.name, 'POST /checkout');

  assert.match(app.stderr, /pyro-run: recording to /);
  assert.match(app.stderr, /pyro-run: view it: npx pyro-run report /);
});

test('with nothing configured, records into ./pyro-run-data of the app', async () => {
  const cwd = tempDir();
  const app = runCli([SHOP], { cwd, env: { PORT: '0' } });
  await driveShop(app, 3);
  app.process.kill('SIGTERM');
  await app.exit();
  const run = readRecording(path.join(cwd, 'pyro-run-data'));
  assert.equal(run.manifest.complete, true);
  assert.ok(run.spans.length > 0);
});

test('--out forces local mode even when backends are configured', async () => {
  const receiver = await startReceiver();
  try {
    const out = tempDir();
    const app = runCli(['--out', out, SHOP], { env: { PORT: '0', PYROSCOPE_SERVER_ADDRESS: receiver.url, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } });
    await driveShop(app, 3);
    app.process.kill('SIGTERM');
    await app.exit();
    assert.equal(receiver.requests.length, 0, 'nothing was sent');
    assert.ok(readRecording(out).spans.length > 0);
  } finally {
    await receiver.close();
  }
});

test("a mistyped PYROSCOPE_SERVER_ADDRESS is a remote set-up with a mistake: one warning naming it, nothing written in the app's folder", async () => {
  const receiver = await startReceiver();
  try {
    const cwd = tempDir();
    const app = runNode(['--import', registerPath, SHOP], {
      cwd,
      env: { PORT: '0', PYROSCOPE_SERVER_ADDRESS: 'pyroscope:4040', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
    await driveShop(app, 3);
    app.process.kill('SIGTERM');
    await app.exit();
    assert.deepEqual(readdirSync(cwd), [], 'no recording in the working directory');
    assert.match(app.stderr, /pyro-run: warning: PYROSCOPE_SERVER_ADDRESS must be an http:\/\/ or https:\/\/ URL; profiles are not sent\n/);
    assert.equal(receiver.ingests.length, 0);
    assert.ok(receiver.spans.length > 0, 'the spans still go where they were told');
  } finally {
    await receiver.close();
  }
});

test('a tiny cap thins the oldest windows rather than deleting them: every time range stays, under the cap, said once', async () => {
  const out = tempDir();
  // Spans take at most half of it: the profile windows alone outgrow the rest.
  const capMb = 0.5;
  const app = runCli(['--out', out, '--max-run-size', String(capMb), '--flush-interval', '1000', '--sampling-interval', '1000', SHOP], { env: { PORT: '0' } });
  // Windows of every second, until they outgrow their share of the cap: the recorder says so in
  // run.json once it merged one. However slow the machine, load goes on until then (a minute at most).
  const base = `http://127.0.0.1:${(await app.line(/listening (\d+)/))[1]}`;
  const thinned = () => {
    const [runDir] = readdirSync(out);
    try {
      return (JSON.parse(readFileSync(path.join(out, runDir!, 'run.json'), 'utf8')) as { counts: { thinnedWindows: number } }).counts.thinnedWindows > 0;
    } catch {
      return false;
    }
  };
  const deadline = Date.now() + 60_000;
  while (!thinned() && Date.now() < deadline) await load(base, (i) => ['/search?q=red%20mug', '/products/7', '/search?q=blue%20lamp'][i % 3]!, 100, 6);
  app.process.kill('SIGTERM');
  await app.exit();
  const run = readRecording(out);
  const cap = Math.round(capMb * 1024 * 1024);
  const { counts } = run.manifest;
  assert.equal(run.manifest.capBytes, cap);
  assert.ok(counts.thinnedWindows > 0, `windows were merged: ${JSON.stringify(counts)}`);
  assert.equal(counts.droppedWindows, 0, 'none deleted');
  assert.ok(run.bytesOnDisk <= cap, `${run.bytesOnDisk} bytes on disk, cap ${cap}`);
  assert.equal(counts.bytes, run.bytesOnDisk);
  const windows = [...new Set(run.profiles.map((p) => Number(p.name.slice(0, 6))))].sort((a, b) => a - b);
  assert.equal(windows[0], 1, 'the first window is still there, merged');
  assert.equal(windows.length + counts.thinnedWindows, counts.windows, 'every window is on disk or merged into one that is');
  // A merged window's samples keep their endpoint, not their span.
  const merged = run.profiles.filter(
    (p) =>
      p.samples.some((sample) => sample.labels.span_name !== undefined) &&
      p.samples.every((sample) => sample.labels.span_id === undefined && sample.labels.trace_id === undefined),
  );
  assert.ok(merged.length > 0, 'a merged window: samples with span_name, none with span_id or trace_id');
  assert.equal(app.stderr.match(/older profile windows are merged/g)?.length, 1, `warned once, not per window:\n${app.stderr}`);
  assert.ok((app.stderr.match(/further span details are not recorded/g)?.length ?? 0) <= 1, app.stderr);
});

test('thinning merges in a thread the app does not see: no worker event, no profiled thread, no warning, and the app ends by itself with its recording whole', async () => {
  const out = tempDir();
  const capMb = 0.5;
  const app = runNode(['--import', registerPath, fixture('apps/thinning.mjs')], {
    env: { PYRO_RUN_OUTPUT_DIR: out, PYRO_RUN_MAX_RUN_MB: String(capMb), PYROSCOPE_FLUSH_INTERVAL_MS: '1000', PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS: '1000' },
  });
  // The app stops its work once run.json counts two merges; nothing else would end it.
  const { code } = await app.exit(90_000);
  assert.equal(code, 0, app.stderr);
  const seen = JSON.parse(app.stdout) as { thinned: number; workerEvents: number };
  assert.ok(seen.thinned >= 2, `the windows outgrew the cap and were merged while the app ran: ${app.stdout}`);
  assert.equal(seen.workerEvents, 0, "process.on('worker') heard of no thread");
  assert.doesNotMatch(app.stderr, /in a thread of their own/, 'the merge thread ran');
  const run = readRecording(out);
  const { counts } = run.manifest;
  assert.equal(run.manifest.complete, true);
  assert.ok(counts.thinnedWindows >= seen.thinned);
  assert.equal(counts.bytes, run.bytesOnDisk, 'run.json counts what is on disk');
  assert.equal(counts.profileFiles, run.profiles.length);
  assert.ok(run.bytesOnDisk <= Math.round(capMb * 1024 * 1024), `${run.bytesOnDisk} bytes on disk`);
  const threads = new Set(run.profiles.flatMap((profile) => profile.samples.map((sample) => sample.labels.thread_name ?? 'main')));
  assert.deepEqual([...threads], ['main'], 'the merge thread is not profiled');
});

test('SIGKILL during a run leaves only whole files', async () => {
  const out = tempDir();
  // The app itself, not the CLI: a SIGKILL cannot be relayed, and the orphan would hold the pipes.
  const app = runNode(['--import', registerPath, SHOP], {
    env: {
      PORT: '0',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      PYRO_RUN_OUTPUT_DIR: out,
      PYROSCOPE_FLUSH_INTERVAL_MS: '1000',
      PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS: '2000',
    },
  });
  await driveShop(app, 120);
  app.process.kill('SIGKILL');
  assert.equal((await app.exit()).signal, 'SIGKILL');
  // readRecording decodes every visible file strictly: a torn write would fail here.
  const run = readRecording(out);
  assert.equal(run.manifest.complete, false);
  assert.equal(run.manifest.endedAt, null);
  assert.ok(run.manifest.counts.windows >= 1, 'windows were written before the kill');
  assert.ok(run.spans.length > 0, 'span batches were written before the kill');
});

test('--quiet records without a word', async () => {
  const out = tempDir();
  const app = runCli(['--quiet', '--out', out, SHOP], { env: { PORT: '0' } });
  await driveShop(app, 3);
  app.process.kill('SIGTERM');
  await app.exit();
  assert.equal(app.stderr, '');
  assert.equal(readRecording(out).manifest.complete, true);
});

test('span files hold bounded lines: one OTLP request of at most 512 spans each, however many spans a write takes', async () => {
  const out = tempDir();
  const app = runCli(['--out', out, '--quiet', fixture('apps/order-jobs.cjs')], { env: { JOBS: '300', CHILDREN: '20' } });
  assert.equal((await app.exit()).code, 0, app.stderr);
  const run = readRecording(out);
  const perLine = run.spanFiles.flatMap((file) =>
    readFileSync(path.join(run.dir, 'spans', file), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map(
        (line) =>
          (JSON.parse(line) as { resourceSpans: { scopeSpans: { spans: unknown[] }[] }[] }).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans))
            .length,
      ),
  );
  assert.ok(run.spans.length > 1024, `enough spans in one write to need lines: ${run.spans.length}`);
  assert.ok(Math.max(...perLine) <= 512, `spans per line: ${perLine.join(', ')}`);
  assert.ok(perLine.length > run.spanFiles.length, 'a file holds several lines');
});

test("CPU on libuv's pool (pbkdf2) is said to be on threads that run no JavaScript, with its share of the process's CPU", async () => {
  const out = tempDir();
  const app = runCli(['--out', out, fixture('apps/pool-crypto.cjs')]);
  assert.equal((await app.exit()).code, 0, app.stderr);
  const run = readRecording(out);
  const processCpuNs = (run.manifest as { processCpuNs?: number }).processCpuNs ?? 0;
  assert.ok(processCpuNs > 0, 'run.json has the process CPU');
  const line = /CPU on threads that run no JavaScript: \S+ of the process's \S+ \((\d+)%\): libuv's pool/.exec(app.stderr);
  assert.ok(line, `the exit summary says so:\n${app.stderr}`);
  assert.ok(Number(line[1]) >= 50, `pbkdf2's work is most of the process's CPU: ${line[1]}%`);
});
