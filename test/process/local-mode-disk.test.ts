/**
 * Local mode's disk, through real processes: the output folder is bounded in total (crash loops,
 * fork-heavy apps), runs never share a folder, a full disk leaves no partial file, and a folder
 * that cannot be written says so — while the app runs unchanged in every case.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { MANIFEST_GROWTH } from '../../src/export/local/run-manifest.js';
import { runFolderName } from '../../src/recording.js';
import { Child, childEnv, fixture, registerPath, repoRoot, runCli, runNode } from '../support/child.js';
import { mountNamespaceUnavailable, runOnTmpfs } from '../support/mount-namespace.js';
import { pidNamespaceUnavailable, UNSHARE_ARGS } from '../support/pid-namespace.js';
import { readRun } from '../support/read-recording.js';
import { writeRecording } from '../support/recording.js';
import { scratchDirs } from '../support/scratch.js';

const SHOP = path.join(repoRoot, 'examples/express/server.mjs');
const BURN = fixture('apps/burn-then-crash.cjs');
const HELLO = fixture('apps/hello-span.cjs');
const MB = 1024 * 1024;

const { fresh: tempDir } = scratchDirs('pyro-run-disk-');

/** Every file under `dir`, hidden ones included: what the folder costs, as `du --apparent-size` counts files. */
function bytesIn(dir: string): number {
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    bytes += entry.isDirectory() ? bytesIn(file) : lstatSync(file).size;
  }
  return bytes;
}

/** The run folders (those with a run.json) directly in `base`. */
const runFolders = (base: string) => readdirSync(base).filter((name) => existsSync(path.join(base, name, 'run.json')));

/** One batch of one span whose name makes it about `kb` KB on disk. */
const spansOfKb = (kb: number) => [
  [{ spanId: '1'.padStart(16, '0'), traceId: '1'.padStart(32, '0'), name: 'x'.repeat(kb * 1024), startNs: 1n, durationNs: 1 }],
];

test('--max-total-size: the oldest finished runs go until the folder fits; a running run and what is not a recording stay; said once', async (t) => {
  const out = tempDir();
  const finished = [1, 2, 3, 4, 5, 6].map((day) =>
    path.basename(writeRecording(out, { name: `shop-2026010${day}-100000-4242`, startedAt: `2026-01-0${day}T10:00:00.000Z`, spanBatches: spansOfKb(90) })),
  );
  mkdirSync(path.join(out, 'notes'));
  writeFileSync(path.join(out, 'notes', 'keep.txt'), 'mine');
  mkdirSync(path.join(out, 'other-tool'));
  writeFileSync(path.join(out, 'other-tool', 'run.json'), JSON.stringify({ format: 'other-tool', startedAt: '2000-01-01T00:00:00Z', complete: true }));
  writeFileSync(path.join(out, 'other-tool', 'data.bin'), Buffer.alloc(100_000));
  writeFileSync(path.join(out, 'README.txt'), 'x'.repeat(100_000));
  const sizes = new Map(finished.map((name) => [name, bytesIn(path.join(out, name))]));

  // The finished runs alone are over the cap (6 × 90 KB > 0.5 MB): the capped app's first write deletes, however little it records.
  // A live process's run in the same folder, recording while the capped app runs.
  const live = runCli(['--out', out, SHOP], { env: { PORT: '0' } });
  t.after(() => live.process.kill('SIGKILL'));
  await live.line(/listening (\d+)/);
  const [liveRun] = runFolders(out).filter((name) => !sizes.has(name) && name !== 'other-tool');
  assert.ok(liveRun, 'the live run has its folder');

  const capMb = 0.5;
  const capped = runCli(['--out', out, '--max-total-size', String(capMb), '--flush-interval', '1000', '--sampling-interval', '1000', BURN], {
    env: { CRASH: 'off', BURN_MS: '1000' },
  });
  assert.equal((await capped.exit()).code, 0, capped.stderr);
  const [cappedRun] = runFolders(out).filter((name) => !sizes.has(name) && name !== 'other-tool' && name !== liveRun);
  assert.ok(cappedRun, `the capped app recorded: ${capped.stderr}`);

  const kept = finished.filter((name) => existsSync(path.join(out, name)));
  const deleted = finished.filter((name) => !kept.includes(name));
  assert.ok(deleted.length >= 1 && kept.length >= 1, `some runs deleted, some kept: ${JSON.stringify({ kept, deleted })}`);
  assert.deepEqual(kept, finished.slice(deleted.length), 'the oldest went first');
  const recordings = [...kept, liveRun, cappedRun].reduce((sum, name) => sum + bytesIn(path.join(out, name)), 0);
  const cap = capMb * MB;
  assert.ok(recordings <= cap, `${recordings} bytes of recordings, cap ${cap}`);
  // The run that deleted made room for its run.json to grow by MANIFEST_GROWTH: a run deleted by
  // its last write was needed for bytes it may not have used.
  const lastDeleted = sizes.get(deleted.at(-1)!)!;
  assert.ok(recordings + lastDeleted + MANIFEST_GROWTH > cap, `no more was deleted than needed: ${recordings} + ${lastDeleted} + ${MANIFEST_GROWTH} vs ${cap}`);

  assert.equal(readFileSync(path.join(out, 'notes', 'keep.txt'), 'utf8'), 'mine');
  assert.deepEqual(readdirSync(path.join(out, 'other-tool')).sort(), ['data.bin', 'run.json']);
  assert.equal(lstatSync(path.join(out, 'README.txt')).size, 100_000);
  assert.deepEqual(
    readdirSync(out).filter((name) => name.startsWith('.')),
    [],
    'nothing half-deleted is left',
  );
  const said =
    capped.stderr.match(
      /pyro-run: warning: deleted the (\d+) oldest finished runs? in .* \([\d.]+ MB\) to keep the recordings there under 0\.5 MB \(--max-total-size\)/g,
    ) ?? [];
  assert.equal(said.length, 1, capped.stderr);

  assert.equal(readRun(path.join(out, liveRun)).manifest.complete, false, 'the live run was still recording');
  live.process.kill('SIGTERM');
  await live.exit();
  assert.equal(readRun(path.join(out, liveRun)).manifest.complete, true, 'and finished whole');
});

test('a crash loop stays under --max-total-size: after every start the folder holds at most the cap (+ run.json growth)', async () => {
  const out = tempDir();
  const capMb = 0.4;
  const cap = capMb * MB;
  // Room is made before each profile or span file is written, counting run.json as last written;
  // run.json is then rewritten with counts that may gain digits and, at the end, endedAt: a few
  // dozen bytes past the cap, which are not checked against it.
  const slack = 256;
  const starts = 5;
  const totals: number[] = [];
  let told = 0;
  for (let start = 0; start < starts; start++) {
    const app = runCli(['--out', out, '--max-total-size', String(capMb), '--flush-interval', '1000', '--sampling-interval', '1000', BURN]);
    const exit = await app.exit();
    assert.equal(exit.code, 1, `the app crashed as it does: ${app.stderr}`);
    totals.push(bytesIn(out));
    assert.ok(totals.at(-1)! <= cap + slack, `after start ${start + 1}: ${totals.at(-1)} bytes, cap ${cap}`);
    if (/warning: deleted the \d+ oldest finished run/.test(app.stderr)) told++;
  }
  const left = runFolders(out);
  assert.ok(left.length < starts, `runs were deleted: ${left.length} of ${starts} left; totals ${totals.join(', ')}`);
  assert.ok(told >= 1);
  for (const name of left) assert.equal(readRun(path.join(out, name)).manifest.complete, true, 'what is left is whole');
});

test('two replicas that are both PID 1 and start in the same second record into two folders, neither stops', { skip: pidNamespaceUnavailable() }, async () => {
  const out = tempDir();
  // The name both ask for, <service>-<second>-1, is taken beforehand for the next half minute:
  // every start collides, with that folder and, in the same second, with the other replica.
  const now = Date.now();
  const taken = Array.from({ length: 32 }, (_, i) => runFolderName('replica', new Date(now + (i - 1) * 1000), 1));
  for (const name of taken) mkdirSync(path.join(out, name));
  const replica = () =>
    new Child(
      spawn('unshare', [...UNSHARE_ARGS, process.execPath, '--import', registerPath, BURN], {
        env: childEnv({
          PYRO_RUN_OUTPUT_DIR: out,
          PYRO_RUN_QUIET: 'on',
          OTEL_SERVICE_NAME: 'replica',
          CRASH: 'off',
          BURN_MS: '800',
          PYROSCOPE_FLUSH_INTERVAL_MS: '1000',
        }),
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
  const replicas = [replica(), replica()];
  const exits = await Promise.all(replicas.map((r) => r.exit()));
  for (const [i, r] of replicas.entries()) {
    assert.equal(exits[i]!.code, 0, r.stderr);
    assert.equal(r.stderr, '', 'no warning: neither stopped recording');
  }
  const runs = runFolders(out);
  assert.equal(runs.length, 2, `two run folders: ${readdirSync(out).join(', ')}`);
  for (const name of runs) {
    assert.match(name, /^replica-\d{8}-\d{6}-1-\d+$/, 'a suffixed name');
    const run = readRun(path.join(out, name));
    assert.equal(run.manifest.pid, 1);
    assert.equal(run.manifest.complete, true);
    assert.ok(run.spans.length > 0 && run.profiles.length > 0, 'each recorded its own spans and profiles');
  }
  for (const name of taken) assert.deepEqual(readdirSync(path.join(out, name)), [], `${name} was left alone`);
});

test('a full disk: no partial file is left, one warning says so, the app runs unchanged', { skip: mountNamespaceUnavailable() }, async () => {
  const mnt = tempDir();
  const copy = tempDir();
  // A 256 KB tmpfs as the app's working directory, so ./pyro-run-data fills it within a second.
  const app = runOnTmpfs([process.execPath, '--import', registerPath, BURN], {
    mnt,
    copy,
    mountOptions: 'size=256k',
    env: {
      CRASH: 'off',
      BURN_MS: '3000',
      PYROSCOPE_FLUSH_INTERVAL_MS: '1000',
      PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS: '1000',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    },
  });
  assert.equal((await app.exit()).code, 0, app.stderr);
  const warnings = app.stderr.split('\n').filter((line) => line.includes('warning'));
  assert.equal(warnings.length, 1, app.stderr);
  assert.match(
    warnings[0]!,
    /^pyro-run: warning: the disk holding .*pyro-run-data\/[^ ]+ is full \(ENOSPC\): profile windows and spans are dropped \(counted in run\.json\) and writing is tried again every 30 s; no partial file is left; the app is not affected$/,
  );

  const base = path.join(copy, 'pyro-run-data');
  const [run] = runFolders(base);
  assert.ok(run);
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [e.name]));
  assert.deepEqual(
    files(base).filter((name) => name.endsWith('.tmp')),
    [],
    'no temporary file left on the full disk',
  );
  // Strict: every profile and span file there decodes whole.
  readRun(path.join(base, run));
});

test('an app whose folder cannot be written: one warning that says read-only, names the folder and --out; the app runs unchanged', async (t) => {
  const root = process.getuid?.() === 0;
  const unavailable = root ? mountNamespaceUnavailable() : undefined;
  if (unavailable) {
    t.skip(`running as root, which ignores permission bits, and ${unavailable}`);
    return;
  }
  let app: Child;
  if (root) {
    // Root writes anywhere chmod allows nothing; a read-only file system stops it too.
    app = runOnTmpfs([process.execPath, '--import', registerPath, HELLO], { mnt: tempDir(), copy: tempDir(), mountOptions: 'ro,size=16k' });
  } else {
    const dir = tempDir();
    chmodSync(dir, 0o555);
    app = runNode(['--import', registerPath, HELLO], { cwd: dir });
  }
  assert.equal((await app.exit()).code, 0, app.stderr);
  assert.equal(app.stdout, 'hi\n');
  assert.match(
    app.stderr,
    /^pyro-run: warning: cannot record into (\S+)\/pyro-run-data: \1\/pyro-run-data (is on a read-only file system \(EROFS\)|is read-only for this process, no permission to write there \(EACCES\)); record into a writable folder with --out <dir> \(PYRO_RUN_OUTPUT_DIR\); the app runs without recording\n$/,
  );
  assert.doesNotMatch(app.stderr, /ENOENT/);
});
