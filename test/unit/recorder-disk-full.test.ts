/**
 * The local recorder on a full disk, in-process so that it runs without root: fs.writeFileSync is
 * replaced by one that writes part of the bytes and then fails with ENOSPC, as the kernel does
 * (test/local-mode-disk fills a real tmpfs where the machine allows it). What comes while the
 * disk is full is dropped and counted, one warning says so, nothing partial stays, and writing
 * goes on by itself once there is room.
 */
import assert from 'node:assert/strict';
import fs, { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { it, type TestContext } from 'node:test';
import { type ReadableSpan, TracerProvider } from '@opentelemetry/sdk-trace';
import { readConfig } from '../../src/config/index.js';
import { LocalRecorder } from '../../src/export/local/local-recorder.js';
import { Logger } from '../../src/log.js';
import { scratchDirs } from '../support/scratch.js';

const { fresh: tempDir } = scratchDirs('pyro-run-disk-full-');

/** `n` ended spans, as the SDK hands them over. */
function spans(n: number): ReadableSpan[] {
  const ended: ReadableSpan[] = [];
  const provider = new TracerProvider({
    spanProcessors: [
      { onStart: () => undefined, onEnd: (span) => void ended.push(span), forceFlush: () => Promise.resolve(), shutdown: () => Promise.resolve() },
    ],
  });
  const tracer = provider.getTracer('disk-full');
  for (let i = 0; i < n; i++) tracer.startSpan(`span ${i}`).end();
  return ended;
}

/** Every file name under `dir`, hidden ones included. */
const filesIn = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesIn(path.join(dir, e.name)) : [e.name]));

/**
 * A recorder on a disk that is full until `room()`; the system clock (Date) and the monotonic one
 * (performance.now()) are mocked: `advance` moves both, as time passing does.
 */
function onFullDisk(t: TestContext) {
  t.mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-11-29T22:15:03.000Z') });
  let monotonic = 1_000;
  t.mock.method(performance, 'now', () => monotonic);
  const advance = (ms: number) => {
    t.mock.timers.tick(ms);
    monotonic += ms;
  };
  const base = tempDir();
  const { config } = readConfig({ PYRO_RUN_OUTPUT_DIR: base, OTEL_SERVICE_NAME: 'full' });
  const lines: string[] = [];
  const log = new Logger(
    'info',
    (text) => text,
    (line) => void lines.push(line),
  );
  const recorder = new LocalRecorder(config, base, log, { pyroRunVersion: 'test', command: ['app.js'], startedAt: new Date() });
  recorder.spans(spans(3));

  let full = true;
  const writeFileSync = fs.writeFileSync;
  t.mock.method(fs, 'writeFileSync', (file: string, data: string | Uint8Array) => {
    if (!full) return writeFileSync(file, data);
    writeFileSync(file, data.slice(0, 10));
    throw Object.assign(new Error(`ENOSPC: no space left on device, write`), { code: 'ENOSPC', errno: -28, syscall: 'write' });
  });
  const room = () => void (full = false);
  /** The span files written so far. */
  const spanFiles = () => readdirSync(path.join(base, readdirSync(base)[0]!, 'spans')).length;
  /** The run's manifest counts, once finished. */
  const finish = () => {
    recorder.finishSync({ window: undefined, spanBatches: [], logBatches: [], metrics: undefined });
    const dir = path.join(base, readdirSync(base)[0]!);
    const manifest = JSON.parse(readFileSync(path.join(dir, 'run.json'), 'utf8')) as { complete: boolean; counts: Record<string, number> };
    return { dir, manifest };
  };
  return { recorder, lines, base, advance, room, spanFiles, finish };
}

it('a full disk: what comes is dropped and counted, one warning, no partial file; writing goes on when there is room', (t) => {
  const { recorder, lines, base, advance, room, finish } = onFullDisk(t);
  // Spans are written at most once a second: each step below is a second or more after the last.
  advance(2_000);
  recorder.spans(spans(2)); // fails: dropped, and writes pause
  advance(2_000);
  recorder.spans(spans(4)); // during the pause: dropped without a try
  advance(31_000);
  recorder.spans(spans(1)); // tried again, still full: dropped, no second warning
  room();
  advance(31_000);
  recorder.spans(spans(5)); // room again: written
  const { dir, manifest } = finish();

  const warnings = lines.filter((line) => line.includes('warning'));
  assert.equal(warnings.length, 1, lines.join(''));
  assert.match(
    warnings[0]!,
    /^pyro-run: warning: the disk holding .*full-\d{8}-\d{6}-\d+ is full \(ENOSPC\): profile windows and spans are dropped \(counted in run\.json\) and writing is tried again every 30 s; no partial file is left; the app is not affected\n$/,
  );
  assert.equal(lines.filter((line) => line.includes('info: there is room on the disk again')).length, 1, lines.join(''));
  assert.deepEqual(
    filesIn(base).filter((name) => name.endsWith('.tmp')),
    [],
    'no partial file',
  );
  assert.equal(manifest.complete, true);
  assert.deepEqual([manifest.counts.spans, manifest.counts.spanFiles, manifest.counts.droppedSpans], [3 + 5, 2, 2 + 4 + 1]);
  assert.equal(readdirSync(path.join(dir, 'spans')).length, 2, 'the batches written, nothing else');
});

it('the pause after a full disk is timed by the monotonic clock: a step back of the system clock does not make it longer', (t) => {
  const { recorder, advance, room, spanFiles, finish } = onFullDisk(t);
  advance(2_000);
  recorder.spans(spans(2)); // fails: writes pause for 30 s
  t.mock.timers.setTime(Date.now() - 3_600_000); // NTP steps the clock an hour back
  room();
  advance(31_000);
  recorder.spans(spans(5)); // the pause is over: written now, not at the end of the run
  assert.equal(spanFiles(), 2);
  const { manifest } = finish();
  assert.deepEqual([manifest.counts.spans, manifest.counts.droppedSpans], [3 + 5, 2]);
});
