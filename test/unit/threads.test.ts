/**
 * The parts of every-thread profiling that need no second thread: worker options with the
 * preload, the spans threads name to each other, pools' submitters, the work between samples, and
 * the message envelopes, tried on MessageChannels within this thread (whose ports work alike).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import { syncBuiltinESMExports } from 'node:module';
import { describe, it } from 'node:test';
import * as threads from 'node:worker_threads';
import { SpanLabels } from '../../src/span-link/labels.js';
import { NO_OWNER, type SampleOwner } from '../../src/span-link/linking.js';
import { linkMessages } from '../../src/threads/message-links.js';
import { Submissions } from '../../src/threads/pools/submissions.js';
import { OWN, type ToMain } from '../../src/threads/protocol.js';
import { RecentWork } from '../../src/threads/recent-work.js';
import { SpanDirectory } from '../../src/threads/span-directory.js';
import { workerThreadName } from '../../src/threads/worker-agent.js';
import { MAIN_PRELOAD_URL } from '../../src/preloads.js';
import { preloadsAgent, refusedOptions, shownExecArgv, withoutMainPreload, withPreload } from '../../src/threads/worker-spawn.js';

const labels = (n: number, name = `span ${n}`) => new SpanLabels(n.toString(16).padStart(16, '0'), n.toString(16).padStart(32, '0'), { name });

describe('a worker started with the preload', () => {
  const preload = withPreload([]).at(-1)!;

  it('gets `--require <worker-preload.js>` after the options it has, once', () => {
    assert.deepEqual(withPreload(['--enable-source-maps']), ['--enable-source-maps', '--require', preload]);
    assert.ok(preload.endsWith(path.join('dist', 'preload', 'worker.js')));
    assert.ok(existsSync(preload), 'the built file');
    assert.deepEqual(withPreload(['--require', preload]), ['--require', preload]);
    assert.ok(preloadsAgent(['-r', preload]));
    assert.ok(preloadsAgent([`--require=${preload}`]));
    assert.ok(!preloadsAgent(['--import', preload]), 'a worker runs no --import preload');
  });

  it('inherits the main thread’s options but its preload, however given: a worker would load the main thread’s agent for nothing', () => {
    const main = MAIN_PRELOAD_URL;
    for (const given of [
      ['--import', main.href],
      [`--import=${main.href}`],
      ['--require', fileURLToPath(main)],
      ['-r', fileURLToPath(main)],
      [`--require=${fileURLToPath(main)}`],
    ]) {
      assert.deepEqual(
        withoutMainPreload(['--enable-source-maps', ...given, '--conditions=dev']),
        ['--enable-source-maps', '--conditions=dev'],
        given.join(' '),
      );
    }
    assert.deepEqual(withoutMainPreload(['--import', 'tsx']), ['--import', 'tsx'], 'anything else stays');
  });

  it('shows, in the worker, the execArgv it would have had, but for the main thread’s preload, which stands as its own (a loader hooks thread starts from it)', () => {
    const main = MAIN_PRELOAD_URL.href;
    assert.deepEqual(shownExecArgv(['--no-warnings']), ['--no-warnings']);
    assert.deepEqual(shownExecArgv(['--import=tsx', '--import', main, '--max-old-space-size=300']), [
      '--import=tsx',
      '--require',
      preload,
      '--max-old-space-size=300',
    ]);
  });

  it('learns from ERR_WORKER_INVALID_EXEC_ARGV which options a worker refuses', () => {
    let error: unknown;
    try {
      new threads.Worker('0', { eval: true, execArgv: ['--max-old-space-size=64', '--title=x'] });
    } catch (thrown) {
      error = thrown;
    }
    assert.deepEqual(refusedOptions(error), ['--max-old-space-size=64', '--title=x']);
    assert.equal(refusedOptions(new TypeError('nope')), undefined);
  });

  it('is named by its name option, else worker <threadId> (Node 24 calls unnamed workers WorkerThread)', () => {
    assert.equal(workerThreadName(3, 'resizer'), 'resizer');
    assert.equal(workerThreadName(3, ''), 'worker 3');
    assert.equal(workerThreadName(3, undefined), 'worker 3');
    assert.equal(workerThreadName(4, 'WorkerThread'), 'worker 4');
    assert.equal(workerThreadName(5, 'main'), 'worker 5', 'the main thread’s name is the main thread’s');
    assert.equal(Buffer.byteLength(workerThreadName(6, 'x'.repeat(5000))) <= 2048, true, 'fits a label value');
  });
});

describe('spans threads name to each other', () => {
  it('a span handed to another thread comes back as its own labels object (its name read when the window is built)', () => {
    const directory = new SpanDirectory();
    const span = labels(1, 'GET');
    const shipped = directory.handOver(span);
    assert.deepEqual(shipped, span.toLabels(true));
    assert.equal(directory.labelsOf(shipped), span);
  });

  it('a span this thread never held gets labels of its own, once per sweep', () => {
    const directory = new SpanDirectory();
    const shipped = labels(2, 'job').toLabels(true);
    const made = directory.labelsOf(shipped)!;
    assert.equal(made.spanName, 'job');
    assert.equal(made.traceId, shipped.trace_id);
    assert.equal(directory.labelsOf(shipped), made);
    directory.sweep(1);
    assert.notEqual(directory.labelsOf(shipped), made);
  });

  it('a handed span is kept until a sweep finds it ended before the sweep before', () => {
    const directory = new SpanDirectory();
    const span = labels(3);
    const shipped = directory.handOver(span);
    directory.sweep(1_000);
    span.ended('GET /x', 1_500);
    directory.sweep(2_000);
    assert.equal(directory.labelsOf(shipped), span, 'ended after the last sweep: still kept');
    directory.sweep(3_000);
    assert.notEqual(directory.labelsOf(shipped), span);
  });
});

describe('pools', () => {
  const owner = (current: () => SpanLabels | undefined): SampleOwner => ({ ...NO_OWNER, sampled: current });

  it('a task object names whoever submitted it, in its message (message.task, workerpool’s message.params)', () => {
    let now: SpanLabels | undefined = labels(1);
    const submissions = new Submissions(owner(() => now));
    const task = { n: 1 };
    const params = [2];
    submissions.submitted(task);
    submissions.submitted(params);
    now = labels(9);
    submissions.submitted({ unrelated: true });
    assert.equal(submissions.submitter({ task, taskId: 3 })?.spanName, 'span 1');
    assert.equal(submissions.submitter({ id: 1, method: 'run', params })?.spanName, 'span 1');
    assert.equal(submissions.submitter({ task: 42 }), undefined, 'a number names nobody');
    assert.equal(submissions.submitter('plain'), undefined);
  });

  it('a post made for a task carries its submitter, whatever the message', () => {
    const submissions = new Submissions(owner(() => undefined));
    const submitter = labels(4);
    assert.equal(
      submissions.posting(submitter, () => submissions.submitter(7)),
      submitter,
    );
    assert.equal(submissions.submitter(7), undefined, 'only while posting');
    assert.equal(
      submissions.posting(undefined, () => 'posted'),
      'posted',
    );
  });
});

describe('the work between samples', () => {
  it('is the last message handled between the two samples', () => {
    const recent = new RecentWork();
    recent.record(100, 140, labels(1));
    recent.record(150, 180, labels(2));
    assert.equal(recent.between(120, 200)?.spanName, 'span 2');
    assert.equal(recent.between(90, 145)?.spanName, 'span 1');
    assert.equal(recent.between(190, 300), undefined, 'nothing ran since');
    assert.equal(recent.between(0, 50), undefined, 'nothing ran yet');
  });

  it('records what an owner runs and enters for a span', () => {
    const recent = new RecentWork();
    const recording = recent.recording(NO_OWNER);
    const before = performance.now() * 1000;
    assert.equal(
      recording.run(labels(5), (a: number) => a + 1, undefined, [1] as never),
      2,
    );
    recording.enter(labels(6));
    recording.run(undefined, () => 0, undefined, []);
    assert.equal(recent.between(before, performance.now() * 1000 + 1)?.spanName, 'span 6');
  });
});

describe('messages carry their sender’s span', () => {
  // Taken before linkMessages replaces them: Node's own ports come from its internal MessageChannel.
  const NodeChannel = threads.MessageChannel;
  const rawReceive = threads.receiveMessageOnPort;
  let sending: SpanLabels | undefined;
  let wrapping = true;
  const runs: (SpanLabels | undefined)[] = [];
  const entered: (SpanLabels | undefined)[] = [];
  const own: ToMain[] = [];
  const directory = new SpanDirectory();
  const owner: SampleOwner = {
    ...NO_OWNER,
    sampled: () => sending,
    run: (l, fn, thisArg, args) => {
      runs.push(l);
      return (fn as (...a: unknown[]) => unknown).apply(thisArg, [...(args as unknown[])]) as never;
    },
    enter: (l) => void entered.push(l),
  };
  linkMessages({
    owner,
    directory,
    mayWrap: () => wrapping,
    submitter: () => undefined,
    ownLabels: () => labels(99, 'own'),
    afterPost: undefined,
    ownMessages: (message) => void own.push(message),
  });
  // As hookThread does: this module imported node:worker_threads, whose namespace takes the patched exports now.
  syncBuiltinESMExports();

  it('posted in a span, a message reaches the listener as posted, which runs with that span', async () => {
    const { port1, port2 } = new threads.MessageChannel();
    const message = { a: [1, { b: 2 }], when: new Date(0) };
    sending = labels(1, 'GET /x');
    port1.postMessage(message);
    sending = undefined;
    const [received] = (await once(port2, 'message')) as [unknown];
    assert.deepEqual(received, message);
    assert.equal(runs.at(-1)?.spanId, labels(1).spanId);
    port1.close();
  });

  it('read with receiveMessageOnPort, it is the message posted, and the reader takes the span from there on', () => {
    const { port1, port2 } = new threads.MessageChannel();
    sending = labels(2);
    port1.postMessage('hello');
    sending = undefined;
    port1.postMessage('no span');
    assert.deepEqual(threads.receiveMessageOnPort(port2), { message: 'hello' });
    assert.equal(entered.at(-1)?.spanId, labels(2).spanId);
    assert.deepEqual(threads.receiveMessageOnPort(port2), { message: 'no span' });
    assert.equal(entered.at(-1)?.spanName, 'own', 'without one, the span the app’s own tracing says');
    port1.close();
  });

  it('Node’s own ports, and every port while an envelope could not be taken off, carry the message bare', () => {
    const internal = new NodeChannel();
    sending = labels(3);
    internal.port1.postMessage({ type: 'loadScript' });
    assert.deepEqual(rawReceive(internal.port2), { message: { type: 'loadScript' } });
    internal.port1.close();
    const { port1, port2 } = new threads.MessageChannel();
    wrapping = false;
    port1.postMessage('bare');
    wrapping = true;
    sending = undefined;
    assert.deepEqual(rawReceive(port2), { message: 'bare' });
    port1.close();
  });

  it('a port received in a message carries envelopes too', async () => {
    const outer = new threads.MessageChannel();
    const inner = new NodeChannel();
    outer.port1.postMessage({ port: inner.port2 }, [inner.port2]);
    const [{ port }] = (await once(outer.port2, 'message')) as [{ port: threads.MessagePort }];
    sending = labels(4);
    port.postMessage('through the received port');
    sending = undefined;
    const raw = rawReceive(inner.port1) as { message: unknown[] };
    assert.equal(raw.message[2], 'through the received port');
    assert.equal(raw.message.length, 3, 'sent in an envelope');
    outer.port1.close();
    inner.port1.close();
    port.close();
  });

  it('the agents’ own messages go to pyro-run, never to a listener', async () => {
    const { port1, port2 } = new threads.MessageChannel();
    const seen: unknown[] = [];
    port2.on('message', (message) => seen.push(message));
    port1.postMessage([OWN, { type: 'hello', thread: 5 }]);
    port1.postMessage('app');
    await once(port2, 'message');
    assert.deepEqual(seen, ['app']);
    assert.deepEqual(own, [{ type: 'hello', thread: 5 }]);
    port1.close();
  });
});
