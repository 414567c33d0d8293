/**
 * The in-use memory profile (`heap` in --profiles): an app keeps ~64 MB from one function and
 * churns garbage from another. Every window's memory profile reaches /ingest, filed by the
 * receiver (Pyroscope's rules) as `memory`, and most of the in-use space is under the function
 * that keeps it; the same in local mode, in the exit summary, `report --json` and the report page
 * in Chromium.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { runReport } from '../../src/cli/report.js';
import type { RunAggregates } from '../../src/report/aggregate.js';
import { frames, launchBrowser, openReport } from '../support/browser.js';
import { fixture, NODE26, runCli } from '../support/child.js';
import { linkedEnv } from '../support/linking.js';
import { startReceiver } from '../support/receiver.js';
import type { IngestRecord } from '../support/receiver-types.js';
import { skipUnless } from '../support/installed.js';

const RETAINER = 'retain_in_use';
/**
 * A heap sample every 64 KB allocated, not the default 512 KB: the ~64 MB kept is then estimated
 * from ~1,000 samples, not ~120, which left "over 40 MB in use" about four standard deviations
 * from the mean.
 */
const HEAP_SAMPLING = { PYROSCOPE_HEAP_SAMPLING_INTERVAL_BYTES: '65536' };

/** The share of a memory profile's in-use bytes in stacks through `frame`. */
function inUseShare(ingest: IngestRecord, frame: string): { share: number; bytes: number } {
  let total = 0;
  let through = 0;
  for (const sample of ingest.samples) {
    const bytes = sample.values.inuse_space ?? 0;
    total += bytes;
    if (sample.stack.includes(frame)) through += bytes;
  }
  return { share: total === 0 ? 0 : through / total, bytes: total };
}

test('with heap on, every window sends a memory profile, and the in-use space is under the function that keeps it', async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const app = runCli(['--profiles', 'cpu,wall,heap', fixture('apps/memory.cjs')], {
    env: { OTEL_SERVICE_NAME: 'memory-app', ...linkedEnv(receiver), ...HEAP_SAMPLING },
  });
  t.after(() => app.process.kill('SIGKILL'));
  const exit = await app.exit();
  assert.equal(exit.code, 0, app.stderr);

  const memory = receiver.ingests.filter((ingest) => ingest.metricName === 'memory');
  const wall = receiver.ingests.filter((ingest) => ingest.metricName === 'wall');
  assert.ok(wall.length >= 3, `windows sent: ${wall.length}`);
  assert.deepEqual(memory.map((ingest) => ingest.from).sort(), wall.map((ingest) => ingest.from).sort(), 'one memory profile per window, the last one too');
  for (const ingest of memory) {
    assert.deepEqual(ingest.profileTypeIds.sort(), ['memory:inuse_objects:count:inuse_space:bytes', 'memory:inuse_space:bytes:inuse_space:bytes']);
    assert.equal(ingest.seriesLabels.service_name, 'memory-app');
    assert.ok(
      ingest.samples.every((sample) => sample.labels.span_id === undefined),
      'memory samples carry no span (V8 records no context with them)',
    );
  }
  const last = memory.sort((a, b) => a.from - b.from).at(-1)!;
  const { share, bytes } = inUseShare(last, RETAINER);
  t.diagnostic(`last window: ${(bytes / 1e6).toFixed(1)} MB in use, ${(share * 100).toFixed(1)}% under ${RETAINER}`);
  assert.ok(bytes > 40e6, `in-use bytes ${bytes}`);
  assert.ok(share >= 0.5, `share under ${RETAINER}: ${share}`);
  assert.ok(
    !last.samples.some((sample) => sample.stack.includes('churn_garbage') && (sample.values.inuse_space ?? 0) > bytes / 4),
    'the churned garbage is not what is in use',
  );
});

test('in local mode, every window records a memory profile, and the summary, report --json and the page put the in-use memory under the function that keeps it', {
  timeout: 120_000,
  skip: skipUnless('chromium'),
}, async (t) => {
  const base = mkdtempSync(path.join(tmpdir(), 'pyro-run-heap-'));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const app = runCli(['--profiles', 'cpu,wall,heap', '--out', path.join(base, 'data'), fixture('apps/memory.cjs')], {
    env: { PYROSCOPE_FLUSH_INTERVAL_MS: '1000', ...HEAP_SAMPLING },
  });
  t.after(() => app.process.kill('SIGKILL'));
  const exit = await app.exit();
  assert.equal(exit.code, 0, app.stderr);
  assert.match(app.stderr, /Memory in use at the last window: [\d.]+MB, allocated in retain_in_use \d+%/);

  const [runName] = readdirSync(path.join(base, 'data'));
  const run = path.join(base, 'data', runName!);
  const files = readdirSync(path.join(run, 'profiles'));
  const windowsOf = (type: string) => files.filter((name) => name.endsWith(`-${type}.pb.gz`)).map((name) => name.split('-')[0]);
  assert.ok(windowsOf('wall').length >= 3, files.join(' '));
  assert.deepEqual(windowsOf('heap'), windowsOf('wall'), 'a memory profile in every window');

  let json = '';
  assert.equal(runReport([run, '--json'], { stdout: (text) => void (json += text), stderr: () => undefined, cwd: base }), 0);
  const aggregates = JSON.parse(json) as RunAggregates;
  const [snapshot] = aggregates.snapshots;
  assert.ok(snapshot, 'report --json has the memory snapshot');
  assert.equal(snapshot.kind, 'heap');
  const nameOf = (frame: number) => aggregates.strings[aggregates.frames.name[frame]!];
  assert.equal(nameOf(snapshot.topSelf[0]!.frame), RETAINER, 'the top in-use function');
  assert.ok(snapshot.topSelf[0]!.value >= snapshot.total / 2, `${snapshot.topSelf[0]!.value} of ${snapshot.total}`);

  assert.equal(runReport([run], { stdout: () => undefined, stderr: () => undefined, cwd: base }), 0);
  const context = await launchBrowser(path.join(base, 'profile'));
  t.after(() => context.close());
  const { page, errors } = await openReport(context, pathToFileURL(path.join(run, 'report.html')).href);
  assert.match((await page.textContent('[data-testid="snapshot"]')) ?? '', /Memory in use at the last window: [\d.]+MB, allocated in retain_in_use/);
  await page.click('[data-testid="type-heap"]');
  await page.waitForSelector('[data-testid="flame-graph"][data-kind="heap"]');
  assert.match((await page.textContent('[data-testid="flame-title"]')) ?? '', /Whole process · memory in use/);
  const drawn = await frames(page);
  const root = drawn.find((frame) => frame.depth === 0 && !frame.ancestor)!;
  assert.equal(root.total, snapshot.total, 'the graph is the snapshot');
  const retained = drawn.filter((frame) => frame.name === RETAINER && !frame.ancestor).reduce((sum, frame) => sum + frame.total, 0);
  assert.ok(retained >= root.total / 2, `${retained} of ${root.total} under ${RETAINER}`);
  await page.locator(`[data-testid="flame-frame"][data-name="${RETAINER}"]`).first().hover();
  assert.match((await page.textContent('[data-testid="flame-tooltip"]')) ?? '', /Total: [\d.]+MB/);
  assert.deepEqual(errors, []);
});

test('allocation profiles (Node 26): every window sends what was allocated in it, filed as memory, most of it by the function that churns', {
  timeout: 120_000,
}, async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const app = runCli(['--profiles', 'cpu,alloc', fixture('apps/memory.cjs')], {
    node: NODE26,
    env: { OTEL_SERVICE_NAME: 'alloc-app', ...linkedEnv(receiver) },
  });
  t.after(() => app.process.kill('SIGKILL'));
  const exit = await app.exit();
  assert.equal(exit.code, 0, app.stderr);
  const cpu = receiver.ingests.filter((ingest) => ingest.metricName === 'process_cpu');
  const alloc = receiver.ingests.filter((ingest) => ingest.metricName === 'memory');
  assert.ok(alloc.length >= 3, `windows: ${alloc.length}`);
  assert.deepEqual(alloc.map((ingest) => ingest.from).sort(), cpu.map((ingest) => ingest.from).sort(), 'one allocation profile per window');
  for (const ingest of alloc)
    assert.deepEqual(ingest.profileTypeIds.sort(), ['memory:alloc_objects:count:alloc_space:bytes', 'memory:alloc_space:bytes:alloc_space:bytes']);
  // After the first window (which holds the retaining loop at start), a window's allocations are the churn's.
  const later = alloc.sort((a, b) => a.from - b.from).slice(1);
  let total = 0;
  let churn = 0;
  for (const sample of later.flatMap((ingest) => ingest.samples)) {
    total += sample.values.alloc_space ?? 0;
    if (sample.stack.includes('churn_garbage')) churn += sample.values.alloc_space ?? 0;
  }
  t.diagnostic(`allocated after the first window: ${(total / 1e6).toFixed(0)} MB, ${((churn / total) * 100).toFixed(1)}% by churn_garbage`);
  assert.ok(churn >= total / 2, `${churn} of ${total}`);
});

test('allocation profiles before Node 26: one warning, and the other profiles go on', async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const app = runCli(['--profiles', 'cpu,alloc', fixture('apps/memory.cjs')], {
    env: { OTEL_SERVICE_NAME: 'alloc-app', MEMORY_RUN_MS: '1500', ...linkedEnv(receiver) },
  });
  t.after(() => app.process.kill('SIGKILL'));
  assert.equal((await app.exit()).code, 0, app.stderr);
  assert.match(app.stderr, /allocation profiles need Node\.js 26 or newer/);
  assert.ok(receiver.ingests.some((ingest) => ingest.metricName === 'process_cpu'));
  assert.ok(!receiver.ingests.some((ingest) => ingest.metricName === 'memory'));
});
