// What a worker thread costs, measured from inside the app: `node [preload] workers.mjs start|tasks`.
// start: starts 8 workers one after the other (each says so from its first line) and prints, as
//   JSON, each one's start (construction to its first message, ms) and the process's RSS before
//   and with all 8 alive (MB).
// tasks: one worker runs 2 000 tasks of a fixed amount of work (about 1 ms of CPU), one at a time,
//   each posted inside a span (the OpenTelemetry API: no-op without an SDK, pyro-run's spans with
//   the agent); prints the worker's and the main thread's CPU per task (µs, each thread's CPU over
//   all the tasks: the kernel updates a running thread's count at scheduler ticks, 4 ms here, so it
//   is read only around the whole run) and the wall time per task.
import { readFileSync } from 'node:fs';
import { trace } from '@opentelemetry/api';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';

const WORKERS = 8;
const TASKS = 2000;
/** Square roots per task: about 1 ms of CPU here. */
const TASK_WORK = 700_000;
/** This thread's CPU time, µs (/proc/thread-self/schedstat; process.threadCpuUsage() counts ticks). */
const cpu = () => Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ', 1)[0]) / 1000;
const rssMb = () => process.memoryUsage().rss / 2 ** 20;

if (!isMainThread) {
  parentPort.postMessage('up');
  parentPort.on('message', (message) => {
    if (message === 'cpu') return parentPort.postMessage(cpu());
    let x = 0;
    for (let i = 0; i < TASK_WORK; i++) x += Math.sqrt(x + i);
    parentPort.postMessage(x);
  });
} else if (process.argv[2] === 'start') {
  const rssBefore = rssMb();
  const startMs = [];
  const workers = [];
  for (let i = 0; i < WORKERS; i++) {
    const started = performance.now();
    const worker = new Worker(new URL(import.meta.url));
    await new Promise((resolve) => worker.once('message', resolve));
    startMs.push(performance.now() - started);
    workers.push(worker);
  }
  process.stdout.write(`${JSON.stringify({ startMs, rssBeforeMb: rssBefore, rssMb: rssMb() })}\n`);
  await Promise.all(workers.map((worker) => worker.terminate()));
} else {
  const worker = new Worker(new URL(import.meta.url));
  await new Promise((resolve) => worker.once('message', resolve));
  const next = () => new Promise((resolve) => worker.once('message', resolve));
  const tracer = trace.getTracer('bench');
  const workerBefore = (worker.postMessage('cpu'), await next());
  const mainBefore = cpu();
  const started = performance.now();
  for (let i = 0; i < TASKS; i++) {
    await tracer.startActiveSpan('task', async (span) => {
      worker.postMessage(i);
      await next();
      span.end();
    });
  }
  const wallMs = performance.now() - started;
  const mainMicros = cpu() - mainBefore;
  worker.postMessage('cpu');
  const workerMicros = (await next()) - workerBefore;
  process.stdout.write(
    `${JSON.stringify({ workerMicrosPerTask: workerMicros / TASKS, mainMicrosPerTask: mainMicros / TASKS, wallMicrosPerTask: (wallMs * 1000) / TASKS })}\n`,
  );
  await worker.terminate();
}
