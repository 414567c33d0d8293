/**
 * Every thread profiled: an express app whose requests hand CPU to worker threads — two raw
 * workers of its own (postMessage), or a piscina, tinypool or workerpool pool — recorded with
 * pyro-run, remote and local. The workers' CPU, as their tasks measured it, must be in the CPU
 * profiles under each worker's thread_name, carrying the span of the request that sent the task;
 * the main thread's own work keeps its spans.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Child, fixture, registerPath, runCli, runNode } from '../support/child.js';
import { cpuIngests, linkedEnv } from '../support/linking.js';
import { load } from '../support/load.js';
import { readRecording } from '../support/read-recording.js';
import { type DecodedSpan, OtlpSpanKind, type SampleView, startReceiver } from '../support/receiver.js';
import { scratchDirs } from '../support/scratch.js';

const { fresh } = scratchDirs('pyro-run-workers-');
const SERVER = fixture('workers/server.mjs');
/**
 * Issue 43's app: 900 requests, 3.6 s of the workers' CPU. A worker's own start-up (its modules, the
 * agent) is in no request's span; on fewer requests its share alone moves the split by percents
 * from one machine to the next.
 */
const REQUESTS = 900;
/** Four requests in flight for two workers: pools queue tasks and post them later, from another request's result. */
const CONCURRENCY = 4;
const WORKER_FRAME = /^hot_(\d+)_worker$/;
/** V8's frame of a thread waiting for work: the CPU kept there is what the thread used while it waited. */
const IDLE_FRAME = '(idle)';
const MAIN_FRAME = /^hot_(\d+)_main$/;

type Pool = 'raw' | 'piscina' | 'tinypool' | 'workerpool';

/** Loads the app, reads what its workers measured, and ends it with SIGTERM: it must die of it, having said nothing. */
async function drive(app: Child): Promise<{ workerCpuMicros: number; tasks: number }> {
  const port = (await app.line(/listening (\d+)/))[1];
  await load(`http://127.0.0.1:${port}`, (i) => `/work/${i}`, REQUESTS, CONCURRENCY);
  const stats = (await (await fetch(`http://127.0.0.1:${port}/stats`)).json()) as { workerCpuMicros: number; tasks: number };
  app.process.kill('SIGTERM');
  const exit = await app.exit();
  assert.equal(exit.signal, 'SIGTERM', `expected death by SIGTERM, got ${JSON.stringify(exit)}\n${app.stderr}`);
  assert.equal(app.stderr, '');
  assert.equal(stats.tasks, REQUESTS);
  return stats;
}

/** The span of each /work/<seq> request. */
function spanOfSeq(spans: readonly DecodedSpan[]): Map<number, string> {
  const bySeq = new Map<number, string>();
  for (const span of spans) {
    const path = span.attributes['url.path'];
    const match = span.kind === OtlpSpanKind.Server && typeof path === 'string' ? /^\/work\/(\d+)$/.exec(path) : null;
    if (match) bySeq.set(Number(match[1]), span.spanId);
  }
  return bySeq;
}

interface Threads {
  /**
   * CPU nanoseconds of the workers' samples: all of it, what of it was used while waiting (the idle
   * frame), and what carries the span of a request (the right one, where the stack names it).
   */
  workerCpu: number;
  workerIdleCpu: number;
  workerCpuInRequests: number;
  /** Samples in a request's own function that carry that request's span, of all of them; per thread kind. */
  worker: { right: number; total: number };
  main: { right: number; total: number };
  names: Set<string>;
}

function threads(samples: readonly SampleView[], bySeq: Map<number, string>): Threads {
  const requestSpans = new Set(bySeq.values());
  const out: Threads = {
    workerCpu: 0,
    workerIdleCpu: 0,
    workerCpuInRequests: 0,
    worker: { right: 0, total: 0 },
    main: { right: 0, total: 0 },
    names: new Set(),
  };
  for (const sample of samples) {
    const thread = sample.labels.thread_name;
    assert.ok(thread, `a sample without thread_name: ${sample.stack.join(' < ')}`);
    out.names.add(thread);
    const cpu = sample.values.cpu ?? 0;
    const inWorker = thread !== 'main';
    const frame = sample.stack.map((name) => (inWorker ? WORKER_FRAME : MAIN_FRAME).exec(name)).find((m) => m !== null);
    if (frame) {
      const judged = inWorker ? out.worker : out.main;
      const count = sample.values.samples ?? 1;
      judged.total += count;
      if (sample.spanId === bySeq.get(Number(frame[1]))) judged.right += count;
    }
    if (!inWorker) continue;
    out.workerCpu += cpu;
    if (sample.stack.length === 1 && sample.stack[0] === IDLE_FRAME) out.workerIdleCpu += cpu;
    if (frame ? sample.spanId === bySeq.get(Number(frame[1])) : requestSpans.has(sample.spanId ?? '')) out.workerCpuInRequests += cpu;
  }
  return out;
}

/** What every variant must show: the acceptance of issue 43. */
function assertThreads(t: { diagnostic(message: string): void }, seen: Threads, measuredMicros: number, names: RegExp[]): void {
  const measured = measuredMicros * 1000;
  const share = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)}%`;
  const working = seen.workerCpu - seen.workerIdleCpu;
  t.diagnostic(
    `workers' CPU in the profiles: ${share(seen.workerCpu, measured)} of what their tasks measured (${share(seen.workerIdleCpu, seen.workerCpu)} of it while waiting); ${share(seen.workerCpuInRequests, working)} of the rest in their request's span; request functions carrying their span: workers ${seen.worker.right}/${seen.worker.total}, main ${seen.main.right}/${seen.main.total}; threads ${[...seen.names].join(', ')}`,
  );
  assert.ok(seen.workerCpu >= 0.8 * measured, `workers' CPU in the profiles: ${share(seen.workerCpu, measured)} of ${measuredMicros} µs measured`);
  // A waiting thread's CPU is mostly the sampler's own wake-ups (a signal every 2 ms here, tens of
  // microseconds each on a loaded machine), nobody's work; bounded, so that work credited nowhere
  // cannot hide there.
  assert.ok(seen.workerIdleCpu <= 0.1 * seen.workerCpu, `workers' CPU while waiting: ${share(seen.workerIdleCpu, seen.workerCpu)} of what the profiles hold`);
  // Issue 43's "≥ 90% of it": of the CPU the workers' profiles hold for their work (a pool's worker
  // can end with up to a shipment's CPU unsent, which the 80% above allows for), not of all they
  // measured.
  assert.ok(
    seen.workerCpuInRequests >= 0.9 * working,
    `workers' CPU in its request's span: ${share(seen.workerCpuInRequests, working)} of what the profiles hold for their work`,
  );
  assert.ok(seen.worker.total >= 150, `too few samples in the workers' request functions: ${seen.worker.total}`);
  assert.ok(seen.worker.right >= 0.99 * seen.worker.total, `workers' request functions in their request's span: ${seen.worker.right}/${seen.worker.total}`);
  assert.ok(seen.main.total >= 100, `too few samples in the main thread's request functions: ${seen.main.total}`);
  assert.ok(seen.main.right >= 0.99 * seen.main.total, `main thread's request functions in their request's span: ${seen.main.right}/${seen.main.total}`);
  assert.ok(seen.names.has('main'));
  const workers = [...seen.names].filter((name) => name !== 'main');
  assert.equal(workers.length, names.length, `worker threads: ${workers.join(', ')}`);
  for (const name of names)
    assert.ok(
      workers.some((worker) => name.test(worker)),
      `no thread named ${name}: ${workers.join(', ')}`,
    );
}

const UNNAMED = /^worker \d+$/;
/** The heap test's mean bytes between two of V8's heap samples (512 KB by default). */
const SAMPLED_EVERY = 16 * 1024;
const POOLS: { pool: Pool; names: RegExp[] }[] = [
  { pool: 'raw', names: [/^cruncher$/, UNNAMED] },
  { pool: 'piscina', names: [UNNAMED, UNNAMED] },
  { pool: 'tinypool', names: [UNNAMED, UNNAMED] },
  { pool: 'workerpool', names: [UNNAMED, UNNAMED] },
];

for (const { pool, names } of POOLS) {
  test(`${pool}: the workers' CPU is in the profiles sent, under each worker's thread_name, in the span of the request that sent the task`, async (t) => {
    const receiver = await startReceiver();
    try {
      const env = { ...linkedEnv(receiver), POOL: pool };
      // The CLI as users start it for the raw workers; the preload by hand for the pools.
      const app = pool === 'raw' ? runCli(['node', SERVER], { env }) : runNode(['--import', registerPath, SERVER], { env });
      const stats = await drive(app);
      const samples = cpuIngests(receiver).flatMap((ingest) => ingest.samples);
      assertThreads(t, threads(samples, spanOfSeq(receiver.spans)), stats.workerCpuMicros, names);
    } finally {
      await receiver.close();
    }
  });
}

test('local mode: the workers are recorded with the main thread, each sample under its thread_name', async (t) => {
  const out = fresh();
  const app = runNode(['--import', registerPath, SERVER], {
    env: {
      POOL: 'piscina',
      PYRO_RUN_OUTPUT_DIR: out,
      PYRO_RUN_QUIET: 'on',
      PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS: '2000',
      PYROSCOPE_FLUSH_INTERVAL_MS: '1000',
    },
  });
  const stats = await drive(app);
  const run = readRecording(out);
  const samples = run.profiles.filter((profile) => profile.type === 'cpu').flatMap((profile) => profile.samples);
  assertThreads(t, threads(samples, spanOfSeq(run.spans)), stats.workerCpuMicros, [UNNAMED, UNNAMED]);
});

test('the heap profile holds each worker’s memory in use, under its thread_name, next to the main thread’s', async () => {
  const out = fresh();
  const app = runNode(['--expose-gc', '--import', registerPath, fixture('workers/heap.mjs')], {
    env: {
      PYRO_RUN_OUTPUT_DIR: out,
      PYRO_RUN_QUIET: 'on',
      PYRO_RUN_PROFILES: 'cpu,heap',
      PYROSCOPE_FLUSH_INTERVAL_MS: '1000',
      PYROSCOPE_HEAP_SAMPLING_INTERVAL_BYTES: String(SAMPLED_EVERY),
    },
  });
  const kept = await app.line(/kept main=(\d+) worker=(\d+)/);
  const exit = await app.exit();
  assert.equal(exit.code, 0, app.stderr);
  assert.equal(app.stderr, '');
  const heaps = readRecording(out).profiles.filter((profile) => profile.type === 'heap');
  const keptBy = (thread: string, frame: string) =>
    Math.max(
      0,
      ...heaps.map((heap) =>
        heap.samples.filter((s) => s.labels.thread_name === thread && s.stack.includes(frame)).reduce((sum, s) => sum + (s.values.inuse_space ?? 0), 0),
      ),
    );
  // V8 samples an allocation every SAMPLED_EVERY bytes on average and scales each sample up by the
  // same factor: what each thread kept (3.5 and 7 MB here) is two hundred samples and more, so its
  // estimate falls within ±40% of the measure but for a chance below one in a billion (six standard deviations).
  for (const [thread, frame, measured] of [
    ['main', 'keep_in_main', Number(kept[1])],
    ['keeper', 'keep_in_worker', Number(kept[2])],
  ] as const) {
    const profiled = keptBy(thread, frame);
    assert.ok(measured >= 200 * SAMPLED_EVERY, `${thread} kept ${measured} bytes: too few for two hundred samples`);
    assert.ok(Math.abs(profiled / measured - 1) <= 0.4, `${thread}: ${profiled} bytes in the heap profile, ${measured} kept as its heap measured`);
  }
  assert.equal(keptBy('keeper', 'keep_in_main') + keptBy('main', 'keep_in_worker'), 0, 'each thread’s memory under its own name');
});
