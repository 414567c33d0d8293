/**
 * The merge thread of local mode's thinning (src/export/local/merge-thread.ts): windows are
 * merged there, not on the app's thread, to the same bytes; a thread that cannot start, or a
 * window that does not decode, still leaves the app a merge or a reason, said once.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { MergeThread } from '../../src/export/local/merge-thread.js';
import { mergeWindowParts, type WindowPart } from '../../src/export/local/window-merge.js';
import { Logger } from '../../src/log.js';
import { SpanLabels } from '../../src/span-link/labels.js';
import { NO_OWNER } from '../../src/span-link/linking.js';
import { linkMessages } from '../../src/threads/message-links.js';
import { SpanDirectory } from '../../src/threads/span-directory.js';
import { buildPprof, type SampleSpec } from '../support/recording.js';
import { scratchDirs } from '../support/scratch.js';

const { fresh: tempDir } = scratchDirs('pyro-run-merge-thread-');
const MS = 1_000_000;

/** A window's CPU profile of `samples` samples, each in a span of its own, over many stacks: as a busy app's. */
function windowFile(dir: string, name: string, samples: number, startMs: number): string {
  const specs: SampleSpec[] = [];
  for (let i = 0; i < samples; i++) {
    const id = (startMs * 100_000 + i).toString(16);
    specs.push({
      stack: ['main', `route${i % 40}`, `handler${i % 300}`, `query${i % 997}`],
      value: MS,
      span: { spanId: id.padStart(16, '0'), spanName: `GET /r${i % 40}`, traceId: id.padStart(32, '0') },
    });
  }
  const file = path.join(dir, name);
  writeFileSync(file, gzipSync(buildPprof('cpu', specs, {}, BigInt(startMs) * BigInt(MS), 1000n * BigInt(MS)).encode()));
  return file;
}

function windows(samples: number): WindowPart[] {
  const dir = tempDir();
  return [
    { type: 'cpu', file: windowFile(dir, 'older.cpu.pb.gz', samples, 1000) },
    { type: 'cpu', file: windowFile(dir, 'newer.cpu.pb.gz', samples, 2000) },
  ];
}

function logged(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return {
    log: new Logger(
      'info',
      (text) => text,
      (line) => void lines.push(line),
    ),
    lines,
  };
}

/** This thread's CPU time, in milliseconds, that `work` takes, awaited. */
async function threadCpuMs<T>(work: () => T | Promise<T>): Promise<{ result: T; ms: number }> {
  const before = process.threadCpuUsage();
  const result = await work();
  const { user, system } = process.threadCpuUsage(before);
  return { result, ms: (user + system) / 1000 };
}

const bytesOf = (merged: { type: string; body: Uint8Array }[]) => merged.map(({ type, body }) => [type, Buffer.from(body).toString('base64')]);

it('a merge runs on a thread of its own: it comes back the same bytes, and the app’s thread spends a small part of the CPU it takes', async () => {
  const parts = windows(8000);
  const { log, lines } = logged();
  const merger = new MergeThread(log);
  try {
    // The thread starts at the first merge; the second is the steady state measured.
    await merger.merge(parts);
    const here = await threadCpuMs(() => mergeWindowParts(parts));
    const there = await threadCpuMs(() => merger.merge(parts));
    assert.deepEqual(bytesOf(there.result), bytesOf(here.result));
    assert.ok(here.ms >= 40, `the merge is heavy enough to tell where it ran: ${here.ms} ms on this thread`);
    assert.ok(there.ms < here.ms / 4, `this thread spent ${there.ms} ms of CPU while the merge thread merged; merging here takes ${here.ms} ms`);
    assert.deepEqual(lines, []);
  } finally {
    merger.stop();
  }
});

it('a window that does not decode: the merge is refused with the reason, and the thread goes on', async () => {
  const parts = windows(10);
  const broken = path.join(tempDir(), 'broken.cpu.pb.gz');
  writeFileSync(broken, gzipSync(Buffer.from('not a profile')));
  const { log, lines } = logged();
  const merger = new MergeThread(log);
  try {
    await assert.rejects(merger.merge([parts[0]!, { type: 'cpu', file: broken }]));
    await assert.rejects(merger.merge([parts[0]!, { type: 'cpu', file: path.join(tempDir(), 'gone.cpu.pb.gz') }]), /ENOENT/);
    assert.deepEqual(bytesOf(await merger.merge(parts)), bytesOf(mergeWindowParts(parts)));
    assert.deepEqual(lines, [], 'no warning: the thread is fine');
  } finally {
    merger.stop();
  }
});

it('a merge thread that cannot start is said once, and windows are merged on the app’s thread instead', async () => {
  const parts = windows(10);
  const { log, lines } = logged();
  const merger = new MergeThread(log, new URL('file:///nowhere/merge-worker.js'));
  try {
    const expected = bytesOf(mergeWindowParts(parts));
    assert.deepEqual(bytesOf(await merger.merge(parts)), expected);
    assert.deepEqual(bytesOf(await merger.merge(parts)), expected);
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0]!, /warning: could not merge profile windows in a thread of their own \(.+\); they are merged on the app's thread from now on/);
  } finally {
    merger.stop();
  }
});

// Last: the agent's message hooks stay installed in this process from here on.
it('a merge asked for while a span runs goes in the agents’ envelope, which the merge thread takes off', async () => {
  const span = new SpanLabels('00000000000000a1', '000000000000000000000000000000a1', { name: 'GET /thin' });
  let asked = 0;
  linkMessages({
    owner: { ...NO_OWNER, sampled: () => (asked++, span) },
    directory: new SpanDirectory(),
    mayWrap: () => true,
    submitter: () => undefined,
    ownLabels: () => undefined,
    afterPost: undefined,
    ownMessages: undefined,
  });
  syncBuiltinESMExports();
  const parts = windows(10);
  const { log, lines } = logged();
  const merger = new MergeThread(log);
  try {
    assert.deepEqual(bytesOf(await merger.merge(parts)), bytesOf(mergeWindowParts(parts)));
    assert.ok(asked > 0, 'the request was posted on a port the hooks wrap');
    assert.deepEqual(lines, []);
  } finally {
    merger.stop();
  }
});
