/**
 * A local recording's profile windows while merges run in the merge thread
 * (src/export/local/profile-windows.ts), in-process with a stand-in for the thread whose answers
 * the test lets through: windows that come meanwhile wait and are written in order, run.json says
 * what is on disk at every step, and at exit the line is written at once whatever the thread does.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { readConfig } from '../../src/config/index.js';
import type { MergeThread } from '../../src/export/local/merge-thread.js';
import { ProfileWindows } from '../../src/export/local/profile-windows.js';
import { RunCaps } from '../../src/export/local/run-caps.js';
import { RunManifest } from '../../src/export/local/run-manifest.js';
import { type MergedProfile, mergeWindowParts, type WindowPart } from '../../src/export/local/window-merge.js';
import { WriteGuard } from '../../src/export/local/write-guard.js';
import { Logger } from '../../src/log.js';
import type { EncodedProfile } from '../../src/profiling/window-encoder.js';
import type { Manifest } from '../../src/recording.js';
import { buildPprof, type SampleSpec } from '../support/recording.js';
import { scratchDirs } from '../support/scratch.js';

const { fresh: tempDir } = scratchDirs('pyro-run-profile-windows-');
const MS = 1_000_000;

/** Window `n`'s CPU profile: each sample in a span of its own, as under load (merging drops the spans, so it saves room). */
function window(n: number): EncodedProfile[] {
  const samples: SampleSpec[] = Array.from({ length: 300 }, (_, i) => {
    const id = (n * 1000 + i).toString(16);
    return {
      stack: ['main', `route${i % 5}`, `step${i % 17}`],
      value: MS,
      span: { spanId: id.padStart(16, '0'), spanName: `GET /r${i % 5}`, traceId: id.padStart(32, '0') },
    };
  });
  return [{ type: 'cpu', body: gzipSync(buildPprof('cpu', samples, {}, BigInt(n) * 1000n * BigInt(MS), 1000n * BigInt(MS)).encode()) }];
}

/** A merge thread whose answers wait until `release()`, then come as they are asked for. */
function heldThread() {
  let held = true;
  const waiting: { parts: WindowPart[]; resolve: (merged: MergedProfile[]) => void; reject: (error: unknown) => void; answered: Promise<unknown> }[] = [];
  const answer = (job: (typeof waiting)[number]) => {
    try {
      job.resolve(mergeWindowParts(job.parts));
    } catch (error) {
      job.reject(error);
    }
  };
  const thread = {
    merge(parts: WindowPart[]): Promise<MergedProfile[]> {
      let job!: (typeof waiting)[number];
      const answered = new Promise<MergedProfile[]>((resolve, reject) => (job = { parts, resolve, reject, answered: Promise.resolve() }));
      job.answered = answered.catch(() => undefined);
      if (held) waiting.push(job);
      else answer(job);
      return answered;
    },
    stop() {},
  };
  return {
    thread: thread as unknown as MergeThread,
    waiting,
    release: () => {
      held = false;
      for (const job of waiting.splice(0)) answer(job);
    },
  };
}

/** A run folder with its manifest, capped at `capBytes`, and its profile windows. */
function run(capBytes: number, thread: MergeThread) {
  const base = tempDir();
  const dir = path.join(base, 'run');
  mkdirSync(path.join(dir, 'profiles'), { recursive: true });
  const lines: string[] = [];
  const log = new Logger(
    'info',
    (text) => text,
    (line) => void lines.push(line),
  );
  const { config } = readConfig({ PYRO_RUN_OUTPUT_DIR: base, OTEL_SERVICE_NAME: 'windows' });
  const manifest = new RunManifest(
    dir,
    config,
    { pyroRunVersion: 'test', command: ['app.js'], startedAt: new Date() },
    { summarized: () => 0, endpoints: () => [] },
  );
  manifest.data.capBytes = capBytes;
  manifest.write();
  const caps = new RunCaps(base, dir, Number.POSITIVE_INFINITY, manifest, log);
  const windows = new ProfileWindows({ dir, manifest, caps, guard: new WriteGuard(dir, log), merger: thread, log });
  /** run.json as on disk, and the windows' files there. */
  const onDisk = () => {
    const files = readdirSync(path.join(dir, 'profiles')).filter((name) => !name.startsWith('.'));
    const { counts } = JSON.parse(readFileSync(path.join(dir, 'run.json'), 'utf8')) as Manifest;
    const bytes = files.reduce((sum, name) => sum + statSync(path.join(dir, 'profiles', name)).size, 0);
    return { files: files.sort(), counts, bytes };
  };
  return { windows, onDisk, lines };
}

const bytesOf = (profiles: EncodedProfile[]) => profiles.reduce((sum, p) => sum + p.body.byteLength, 0);

it('windows that come while a merge runs wait in line, then are written in order; run.json says what is on disk at every step', async () => {
  const all = [1, 2, 3, 4, 5].map(window);
  const { thread, waiting, release } = heldThread();
  const { windows, onDisk } = run(Math.floor(2.5 * bytesOf(all[0]!)), thread);
  windows.add(all[0]!);
  windows.add(all[1]!);
  windows.add(all[2]!);
  assert.equal(waiting.length, 1, 'the third window waits for a merge of the first two');
  windows.add(all[3]!);
  windows.add(all[4]!);
  assert.equal(waiting.length, 1, 'one merge at a time');
  let disk = onDisk();
  assert.deepEqual(disk.files, ['000001-cpu.pb.gz', '000002-cpu.pb.gz'], 'the windows in line are not on disk yet');
  assert.equal(disk.counts.windows, 2);
  assert.equal(disk.counts.bytes, disk.bytes);

  release();
  await windows.settle(Date.now() + 30_000);
  disk = onDisk();
  assert.equal(disk.counts.bytes, disk.bytes, 'run.json counts what is on disk');
  assert.equal(disk.counts.profileFiles, disk.files.length);
  assert.ok(disk.counts.thinnedWindows >= 1, JSON.stringify(disk.counts));
  assert.equal(disk.counts.droppedWindows, 0, 'merged, none deleted');
  assert.equal(disk.files.length + disk.counts.thinnedWindows, 5, 'every window is on disk or merged into one that is');
  assert.equal(disk.files[0], '000001-cpu.pb.gz', 'the first window is still there, merged');
  assert.equal(disk.files.at(-1), '000005-cpu.pb.gz', 'the newest window is written, after those before it');
});

it('at exit the line is written at once, merging on this thread; the merge thread’s late answer changes nothing', async () => {
  const all = [1, 2, 3, 4, 5].map(window);
  const { thread, waiting, release } = heldThread();
  const { windows, onDisk } = run(Math.floor(2.5 * bytesOf(all[0]!)), thread);
  for (const profiles of all.slice(0, 4)) windows.add(profiles);
  assert.equal(waiting.length, 1);
  const late = waiting[0]!.answered;

  windows.writeAllSync([all[4]!]);
  const atExit = onDisk();
  assert.equal(atExit.counts.bytes, atExit.bytes);
  assert.equal(atExit.files.length + atExit.counts.thinnedWindows, 5);
  assert.equal(atExit.files.at(-1), '000005-cpu.pb.gz');

  release();
  await late;
  // Its handling, if any, is done by the next turn.
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(onDisk(), atExit);
});

it('a merge that fails in the thread saves nothing: the oldest window goes instead, counted', async () => {
  const all = [1, 2, 3].map(window);
  const failing = {
    merge: () => Promise.reject(new Error('no such profile')),
    stop() {},
  } as unknown as MergeThread;
  const { windows, onDisk, lines } = run(Math.floor(2.5 * bytesOf(all[0]!)), failing);
  for (const profiles of all) windows.add(profiles);
  await windows.settle(Date.now() + 30_000);
  const disk = onDisk();
  assert.deepEqual(disk.files, ['000002-cpu.pb.gz', '000003-cpu.pb.gz']);
  assert.equal(disk.counts.droppedWindows, 1);
  assert.equal(disk.counts.thinnedWindows, 0);
  assert.equal(disk.counts.bytes, disk.bytes);
  assert.match(lines.join('\n'), /the oldest profile windows are deleted to make room/);
});
