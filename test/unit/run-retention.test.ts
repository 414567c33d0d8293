/**
 * The total cap of local mode's output folder, as rules: which runs count as running (never
 * deleted), which finished runs go (the oldest, only as many as needed), and the cap applied to a
 * real folder in-process: recordings only, renamed away at once, removed by exit.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { RUN_STALE_MS } from '../../src/recording.js';
import { isRunning, type LivenessFacts, pidNamespace, type Vantage } from '../../src/export/local/run-liveness.js';
import { MAX_FINISHED_RUNS, runsToDelete, TotalCap, type WeighedRun } from '../../src/export/local/run-retention.js';
import { Logger } from '../../src/log.js';
import { writeRecording } from '../support/recording.js';
import { scratchDirs } from '../support/scratch.js';

const { fresh: tempDir } = scratchDirs('pyro-run-retention-');

describe('a run is running until it is complete, silent past the heartbeat, or its process is gone where we can tell', () => {
  const NOW = 1_800_000_000_000;
  const OURS = 'boot-a/pid:[4026531836]';
  const here = (alive: number[]): Vantage => ({ nowMs: NOW, pidNamespace: OURS, pidAlive: (pid) => alive.includes(pid) });
  const run = (facts: Partial<LivenessFacts>): LivenessFacts => ({ complete: false, writtenAtMs: NOW - 1000, pid: 42, pidNamespace: OURS, ...facts });
  const cases: { name: string; run: LivenessFacts; alive?: number[]; pidNamespace?: string | null; running: boolean }[] = [
    { name: 'complete: finished, even with a live pid and a fresh run.json', run: run({ complete: true }), alive: [42], running: false },
    { name: 'not complete, fresh, its pid alive here: running', run: run({}), alive: [42], running: true },
    { name: 'not complete, fresh, its pid gone from our namespace (SIGKILL, OOM): finished at once', run: run({}), alive: [], running: false },
    {
      name: 'not complete, silent for longer than the stale time: finished, whatever its pid',
      run: run({ writtenAtMs: NOW - RUN_STALE_MS - 1 }),
      alive: [42],
      running: false,
    },
    { name: 'silent for exactly the stale time: still running', run: run({ writtenAtMs: NOW - RUN_STALE_MS }), alive: [42], running: true },
    {
      name: 'PID 1 of another container (another namespace), fresh: running, though no pid 1 lives here',
      run: run({ pid: 1, pidNamespace: 'boot-a/pid:[4026532999]' }),
      alive: [],
      running: true,
    },
    {
      name: 'another boot of the same namespace number (a reboot): its pid means nothing, fresh: running',
      run: run({ pidNamespace: 'boot-b/pid:[4026531836]' }),
      alive: [],
      running: true,
    },
    {
      name: 'a pid reused by another process does not keep a run running past the stale time',
      run: run({ writtenAtMs: NOW - RUN_STALE_MS - 1 }),
      alive: [42],
      running: false,
    },
    {
      name: 'no namespace on record (not Linux, older pyro-run): the heartbeat alone decides',
      run: run({ pidNamespace: undefined }),
      alive: [],
      running: true,
    },
    { name: 'no namespace here (a sandbox without /proc): pids are not compared', run: run({}), alive: [], pidNamespace: null, running: true },
    { name: 'a run.json written in the future (clock skew): running', run: run({ writtenAtMs: NOW + 60_000 }), alive: [42], running: true },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const vantage = { ...here(c.alive ?? []), ...(c.pidNamespace === undefined ? {} : { pidNamespace: c.pidNamespace }) };
      assert.equal(isRunning(c.run, vantage), c.running);
    });
  }
});

describe('the oldest finished runs go first, only as many as the cap needs, never a running one', () => {
  const r = (name: string, startedAtMs: number, bytes: number, running = false): WeighedRun => ({ name, startedAtMs, bytes, running });
  const limits = { capBytes: 100, maxFinishedRuns: MAX_FINISHED_RUNS };
  const cases: { name: string; runs: WeighedRun[]; own: number; limits?: typeof limits; deleted: string[] }[] = [
    { name: 'under the cap: nothing', runs: [r('a', 1, 30), r('b', 2, 30)], own: 40, deleted: [] },
    { name: 'exactly at the cap: nothing', runs: [r('a', 1, 30), r('b', 2, 30)], own: 40, deleted: [] },
    { name: 'over by a little: the oldest only', runs: [r('b', 2, 30), r('a', 1, 30), r('c', 3, 30)], own: 20, deleted: ['a'] },
    { name: 'over by more than the oldest: oldest first until it fits', runs: [r('a', 1, 10), r('b', 2, 10), r('c', 3, 60)], own: 40, deleted: ['a', 'b'] },
    {
      name: 'age decides, not size: the small old run goes first though the big new one alone would do',
      runs: [r('big-new', 9, 80), r('small-old', 1, 5)],
      own: 30,
      deleted: ['small-old', 'big-new'],
    },
    { name: 'same start: by name, for a stable choice', runs: [r('y', 5, 50), r('x', 5, 50)], own: 50, deleted: ['x'] },
    { name: 'a running run is never chosen, though it counts', runs: [r('live', 0, 50, true), r('a', 1, 30), r('b', 2, 30)], own: 30, deleted: ['a', 'b'] },
    {
      name: 'running runs alone over the cap: every finished run goes, and that is all',
      runs: [r('live', 0, 150, true), r('a', 1, 10)],
      own: 0,
      deleted: ['a'],
    },
    { name: 'this run alone over the cap: every finished run goes', runs: [r('a', 1, 10), r('b', 2, 10)], own: 500, deleted: ['a', 'b'] },
    {
      name: 'more finished runs than kept: the oldest go though the bytes fit',
      runs: [r('a', 1, 1), r('b', 2, 1), r('c', 3, 1)],
      own: 1,
      limits: { capBytes: 100, maxFinishedRuns: 2 },
      deleted: ['a'],
    },
    {
      name: 'running runs are not counted among the finished kept',
      runs: [r('live1', 0, 1, true), r('live2', 0, 1, true), r('a', 1, 1), r('b', 2, 1)],
      own: 1,
      limits: { capBytes: 100, maxFinishedRuns: 2 },
      deleted: [],
    },
    { name: 'an empty folder: nothing', runs: [], own: 1000, deleted: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(
        runsToDelete(c.runs, c.own, c.limits ?? limits).map((run) => run.name),
        c.deleted,
      );
    });
  }
});

describe('the total cap on a real folder', () => {
  const logger = () => {
    const lines: string[] = [];
    return {
      log: new Logger(
        'debug',
        (t) => t,
        (line) => void lines.push(line),
      ),
      lines,
    };
  };
  /** One batch of one span whose name makes it about `kb` KB on disk. */
  const spansOfKb = (kb: number) => [
    [{ spanId: '1'.padStart(16, '0'), traceId: '1'.padStart(32, '0'), name: 'x'.repeat(kb * 1024), startNs: 1n, durationNs: 1 }],
  ];
  /** A finished recording of about `kb` KB that started `day` days into 2026. */
  const finishedRun = (base: string, day: number, kb: number) =>
    writeRecording(base, { name: `old-${day}`, startedAt: new Date(Date.UTC(2026, 0, day)).toISOString(), spanBatches: spansOfKb(kb) });

  it('deletes only recordings: a folder without run.json, one of another format, loose files and links stay', () => {
    const base = tempDir();
    for (let day = 1; day <= 3; day++) finishedRun(base, day, 10);
    mkdirSync(path.join(base, 'notes'));
    writeFileSync(path.join(base, 'notes', 'keep.txt'), 'mine');
    mkdirSync(path.join(base, 'other-tool'));
    writeFileSync(path.join(base, 'other-tool', 'run.json'), JSON.stringify({ format: 'something-else', startedAt: '2000-01-01T00:00:00Z', complete: true }));
    writeFileSync(path.join(base, 'README.txt'), 'x'.repeat(50_000));
    const { log } = logger();
    const cap = new TotalCap(base, 'mine', 1, log);
    cap.room(0);
    cap.settle();
    assert.deepEqual(readdirSync(base).sort(), ['README.txt', 'notes', 'other-tool']);
    assert.equal(readFileSync(path.join(base, 'notes', 'keep.txt'), 'utf8'), 'mine');
  });

  it('a deleted run is gone from the folder at once (renamed away), and removed by the time settle returns', () => {
    const base = tempDir();
    finishedRun(base, 1, 30);
    finishedRun(base, 2, 30);
    const { log, lines } = logger();
    const cap = new TotalCap(base, 'mine', 40 * 1024, log);
    cap.room(0);
    assert.deepEqual(
      readdirSync(base).filter((name) => !name.startsWith('.')),
      ['old-2'],
    );
    cap.settle();
    assert.deepEqual(readdirSync(base), ['old-2']);
    assert.equal(
      lines.filter((line) => /warning: deleted the 1 oldest finished run in .* \(0\.03 MB\) to keep the recordings there under 0\.04 MB/.test(line)).length,
      1,
      lines.join(''),
    );
  });

  it('says so once: later deletions in the same process are for debug only', () => {
    const base = tempDir();
    for (let day = 1; day <= 4; day++) finishedRun(base, day, 10);
    const { log, lines } = logger();
    const cap = new TotalCap(base, 'mine', 35 * 1024, log);
    cap.room(0);
    cap.room(12 * 1024);
    cap.room(35 * 1024);
    cap.settle();
    assert.deepEqual(readdirSync(base), []);
    assert.equal(lines.filter((line) => line.includes('warning: deleted the')).length, 1, lines.join(''));
  });

  it('a run still recording is kept, and what it holds is left out of the room', () => {
    const base = tempDir();
    finishedRun(base, 1, 10);
    writeRecording(base, {
      name: 'live',
      spanBatches: spansOfKb(20),
      manifest: { complete: false, endedAt: null, pid: process.pid, pidNamespace: pidNamespace() },
    });
    const { log } = logger();
    const cap = new TotalCap(base, 'mine', 25 * 1024, log);
    const room = cap.room(1000);
    cap.settle();
    assert.deepEqual(readdirSync(base), ['live']);
    assert.ok(room < 25 * 1024 - 20 * 1024 && room > 0, `room ${room}`);
  });

  it('a run whose process is gone from this namespace, or silent past the stale time, is finished and can go', () => {
    const base = tempDir();
    const gone = writeRecording(base, {
      name: 'killed',
      startedAt: '2026-01-01T00:00:00Z',
      manifest: { complete: false, endedAt: null, pid: 2 ** 22 + 1, pidNamespace: pidNamespace() },
    });
    const silent = writeRecording(base, {
      name: 'silent',
      startedAt: '2026-01-02T00:00:00Z',
      manifest: { complete: false, endedAt: null, pid: 1, pidNamespace: 'another-host/pid:[1]' },
    });
    const old = new Date(Date.now() - RUN_STALE_MS - 60_000);
    utimesSync(path.join(silent, 'run.json'), old, old);
    const { log } = logger();
    const cap = new TotalCap(base, 'mine', 1, log);
    cap.room(0);
    cap.settle();
    assert.equal(existsSync(gone), pidNamespace() === null, 'a dead pid is only trusted where namespaces can be compared');
    assert.equal(existsSync(silent), false);
  });

  it('the run doing the deleting is never counted or deleted', () => {
    const base = tempDir();
    writeRecording(base, { name: 'mine', startedAt: '2000-01-01T00:00:00Z' });
    const { log } = logger();
    const cap = new TotalCap(base, 'mine', 1, log);
    assert.equal(cap.room(0), 1);
    cap.settle();
    assert.deepEqual(readdirSync(base), ['mine']);
  });

  it('removals a process did not live to finish are finished by the next one', () => {
    const base = tempDir();
    const leftover = path.join(base, '.pyro-run-deleting-old-1.999-1');
    mkdirSync(path.join(leftover, 'profiles'), { recursive: true });
    writeFileSync(path.join(leftover, 'profiles', '000001-cpu.pb.gz'), 'x'.repeat(1000));
    const { log } = logger();
    const cap = new TotalCap(base, 'mine', 1024, log);
    cap.room(0);
    cap.settle();
    assert.deepEqual(readdirSync(base), []);
  });

  it('a folder that cannot be read: one warning, only the run cap applies, nothing thrown', () => {
    const { log, lines } = logger();
    const cap = new TotalCap(path.join(tempDir(), 'gone'), 'mine', 1024, log);
    assert.equal(cap.room(0), Number.POSITIVE_INFINITY);
    assert.equal(cap.room(0), Number.POSITIVE_INFINITY);
    assert.equal(lines.filter((line) => line.includes('warning: cannot read')).length, 1, lines.join(''));
  });
});
