// What worker threads cost with pyro-run: `node bench/workers.mjs [--rounds N]` (needs `npm run build`).
//
// Side by side, in fresh processes, rounds interleaved: bare node, pyro-run with its worker agents
// (the default) and pyro-run with PYRO_RUN_WORKERS=off (the main thread's agent only), in local
// mode into a temporary folder:
//   start  a worker's start (construction to its first message) and the RSS 8 idle workers add,
//          bench/apps/workers.mjs start;
//   tasks  one worker running 1 ms tasks one at a time, each posted inside a span: the worker's
//          CPU per task, the main thread's CPU per task, the wall time per task.
// Then, pyro-run only: how much of the workers' CPU the profiles hold at the default sampling
// interval, and how much carries its request's span — the express app of the tests
// (test/fixtures/workers/server.mjs), 400 requests, 4 at a time, 2 workers, 4 ms each, per pool.
// Prints medians (min–max) over rounds and the ratios to bare node.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { countOption } from './lib/args.mjs';
import { NODE, PYRO_REGISTER, REPO } from './lib/contenders.mjs';
import { run, start } from './lib/proc.mjs';
import { summary } from './lib/stats.mjs';
import { render, spread, times } from './lib/table.mjs';

const USAGE = 'node bench/workers.mjs [--rounds N]';
const rounds = countOption(process.argv, '--rounds', 5, USAGE);
const APP = path.join(REPO, 'bench/apps/workers.mjs');
const SERVER = path.join(REPO, 'test/fixtures/workers/server.mjs');
const out = mkdtempSync(path.join(tmpdir(), 'pyro-run-bench-workers-'));
const base = { PATH: process.env.PATH, HOME: process.env.HOME, PYRO_RUN_OUTPUT_DIR: out, PYRO_RUN_QUIET: 'on' };

const CONTENDERS = [
  { id: 'bare', label: 'bare node', preload: [], env: {} },
  { id: 'pyro', label: 'pyro-run', preload: ['--import', PYRO_REGISTER], env: {} },
  { id: 'pyro-off', label: 'pyro-run, PYRO_RUN_WORKERS=off', preload: ['--import', PYRO_REGISTER], env: { PYRO_RUN_WORKERS: 'off' } },
];

async function measure(contender, mode) {
  const result = await run(NODE[24], [...contender.preload, APP, mode], { env: { ...base, ...contender.env }, cwd: REPO });
  if (result.code !== 0) throw new Error(`${contender.id} ${mode}: exit ${result.code}\n${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').at(-1));
}

try {
  const readings = Object.fromEntries(CONTENDERS.map((c) => [c.id, { startMs: [], addedRssMb: [], worker: [], main: [], wall: [] }]));
  for (let round = 0; round < rounds; round++) {
    for (const contender of CONTENDERS) {
      const started = await measure(contender, 'start');
      const r = readings[contender.id];
      r.startMs.push(...started.startMs.slice(1));
      r.addedRssMb.push((started.rssMb - started.rssBeforeMb) / started.startMs.length);
      const tasks = await measure(contender, 'tasks');
      r.worker.push(tasks.workerMicrosPerTask);
      r.main.push(tasks.mainMicrosPerTask);
      r.wall.push(tasks.wallMicrosPerTask);
    }
  }
  const columns = ['startMs', 'addedRssMb', 'worker', 'main', 'wall'];
  const bare = Object.fromEntries(columns.map((column) => [column, summary(readings.bare[column]).median]));
  const rows = CONTENDERS.map((c) => {
    const r = readings[c.id];
    return [
      c.label,
      ...columns.flatMap((column) => [
        spread(summary(r[column]), column === 'addedRssMb' ? 1 : 1),
        c.id === 'bare' ? '' : times(summary(r[column]).median / bare[column]),
      ]),
    ];
  });
  console.log(
    render(
      `worker threads, ${rounds} rounds (median, min–max)`,
      ['', 'worker start ms', '×', 'RSS per idle worker MB', '×', 'worker CPU µs/task', '×', 'main CPU µs/task', '×', 'wall µs/task', '×'],
      rows,
    ),
  );

  const pools = [];
  for (const pool of ['raw', 'piscina', 'tinypool', 'workerpool']) {
    const dir = mkdtempSync(path.join(out, `${pool}-`));
    const app = start(NODE[24], ['--import', PYRO_REGISTER, SERVER], { env: { ...base, PYRO_RUN_OUTPUT_DIR: dir, POOL: pool }, cwd: REPO, name: pool });
    const port = (await app.line(/listening (\d+)/)).match[1];
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < 400) await (await fetch(`http://127.0.0.1:${port}/work/${next++}`)).arrayBuffer();
      }),
    );
    const { workerCpuMicros } = await (await fetch(`http://127.0.0.1:${port}/stats`)).json();
    await app.stop('SIGTERM');
    const { readRecording } = await import(path.join(REPO, 'dist/test/support/read-recording.js'));
    const recording = readRecording(dir);
    const requests = new Set(recording.spans.filter((span) => span.kind === 2).map((span) => span.spanId));
    let inProfiles = 0;
    let inSpans = 0;
    for (const sample of recording.profiles.filter((p) => p.type === 'cpu').flatMap((p) => p.samples)) {
      if (sample.labels.thread_name === 'main') continue;
      inProfiles += sample.values.cpu ?? 0;
      if (requests.has(sample.spanId)) inSpans += sample.values.cpu ?? 0;
    }
    const share = (part) => `${((100 * part) / (workerCpuMicros * 1000)).toFixed(1)}%`;
    pools.push([pool, (workerCpuMicros / 1000).toFixed(0), share(inProfiles), share(inSpans)]);
  }
  console.log(
    render(
      "\nthe workers' CPU (as their tasks measured it) in the CPU profiles, default sampling interval",
      ['pool', 'measured ms', 'in the profiles', 'in its request’s span'],
      pools,
    ),
  );
} finally {
  rmSync(out, { recursive: true, force: true });
}
