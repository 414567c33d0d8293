// Where a request's CPU goes under one contender: a CPU profile of the app under load
// (bench/probes/cpu-profile.cjs, V8's sampler every 1 ms through the inspector), its self time per
// request by whose code ran — pyro-run's, each bundled OpenTelemetry part, each package, Node's,
// V8's (native functions, the garbage collector) — and the functions with the most:
// `node bench/route-profile.mjs [id] [--app express|postgres] [--route PATH] [--warmup W] [--seconds S] [--top N]`
// (a contender id of lib/contenders.mjs, optionally id@{"ENV":"value"}; `pyro` unless said; needs
// `npm run build` and wrk, and Debian's postgresql for `--app postgres`).
//
// The app runs alone on the app core under `wrk -c16`; the window starts W seconds after its first
// request (10 unless said) and lasts S (12). The profile's time is the main thread's; every
// thread's CPU (V8's garbage collection helpers, its profiler's thread, libuv's) is printed beside
// it, read from Linux's schedstat over the same seconds — this profiler's thread among them (V8
// names every profiler's thread `v8:ProfEvntProc`). With profiles on, V8 runs the
// agent's sampler and this one side by side. What it is for is the shares within one run: the
// machine's speed moves between runs (docs/performance.md), so contenders' CPU is compared side by
// side with bench/pair.mjs and bench/postgres-app.mjs, not by running this twice.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { frameOwner } from '../dist/src/report/frame-owner.js';
import { startPostgres } from '../dist/test/support/postgres.js';
import { countOption } from './lib/args.mjs';
import { launchApp } from './lib/app.mjs';
import { BENCH, contenderOf, REPO } from './lib/contenders.mjs';
import { LOAD_CORE } from './lib/cores.mjs';
import { pinSelf } from './lib/proc.mjs';
import { threadStats } from './lib/side-by-side.mjs';
import { startSink } from './lib/sink.mjs';
import { findWrk, wrk } from './lib/wrk.mjs';

const USAGE = 'node bench/route-profile.mjs [id] [--app express|postgres] [--route PATH] [--warmup W] [--seconds S] [--top N]';
const APPS = {
  express: { file: path.join(BENCH, 'apps/express.cjs'), route: '/json' },
  postgres: { file: path.join(REPO, 'examples/express-postgres/server.mjs'), route: '/orders/42' },
};
const argv = process.argv.slice(2);
const option = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const warmupSeconds = countOption(argv, '--warmup', 10, USAGE);
const seconds = countOption(argv, '--seconds', 12, USAGE);
const top = countOption(argv, '--top', 25, USAGE);
const app = APPS[option('--app') ?? 'express'];
if (!app) throw new Error(`usage: ${USAGE}`);
const route = option('--route') ?? app.route;
const id = argv.find((arg, i) => !arg.startsWith('--') && !argv[i - 1]?.startsWith('--')) ?? 'pyro';
const contender = contenderOf(id);
if (!contender) throw new Error(`unknown contender ${id}; usage: ${USAGE}`);
const bin = findWrk();
if (!bin) throw new Error('wrk is not installed (apt-get install -y wrk)');

// The runner and what it starts unpinned (PostgreSQL's server) off the app's core: a CPU profile
// reads time as the main thread's whenever a sample finds it on a stack, preempted or not.
pinSelf(LOAD_CORE);
const dir = mkdtempSync(path.join(tmpdir(), 'route-profile-'));
const file = path.join(dir, 'profile.json');
const postgres = app === APPS.postgres ? await startPostgres() : undefined;
const sink = await startSink();
try {
  const extraEnv = {
    ...(postgres ? { DATABASE_URL: postgres.url, PORT: '0' } : {}),
    BENCH_CPU_PROFILE_FILE: file,
    BENCH_CPU_PROFILE_AFTER_MS: String(warmupSeconds * 1000),
    BENCH_CPU_PROFILE_MS: String(seconds * 1000),
  };
  const nodeFlags = ['--require', path.join(BENCH, 'probes/cpu-profile.cjs')];
  // The PostgreSQL example seeds its tables on its first start.
  const { handle, url } = await launchApp(contender, app.file, { sinkUrl: sink.url, extraEnv, nodeFlags, timeoutMs: 120_000 });
  try {
    const written = handle.line(/^bench cpu profile written$/, (warmupSeconds + seconds + 30) * 1000);
    // Warm-up, then the measured load: the probe's window opens W seconds after the first request,
    // as the second run starts, so the threads' CPU is read over the same seconds as the profile.
    await wrk(bin, `${url}${route}`, { connections: 16, seconds: warmupSeconds });
    const before = cpuByThread(handle.child.pid);
    const load = await wrk(bin, `${url}${route}`, { connections: 16, seconds });
    const after = cpuByThread(handle.child.pid);
    await written;
    const { requests, profile } = JSON.parse(readFileSync(file, 'utf8'));
    report(requests, selfTimes(profile), threadsPerRequest(before, after, load.requests));
  } finally {
    await handle.stop('SIGKILL');
  }
} finally {
  await sink.stop();
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);

/** Nanoseconds on CPU of `pid`'s threads by name (Linux's `comm`), its main thread as `main thread`. */
function cpuByThread(pid) {
  const byName = new Map();
  for (const { name, main, runNs } of threadStats(pid)) {
    const key = main ? 'main thread' : name;
    byName.set(key, (byName.get(key) ?? 0) + runNs);
  }
  return byName;
}

/** µs a request each thread name spent on CPU between two readings, most first. */
function threadsPerRequest(before, after, requests) {
  return [...after]
    .map(([name, ns]) => [name, (ns - (before.get(name) ?? 0)) / 1000 / requests])
    .filter(([, micros]) => micros > 0)
    .sort((a, b) => b[1] - a[1]);
}

/** Each profile node's self time in µs, keyed by its node; V8's `(idle)` (the thread waiting) left out. */
function selfTimes(profile) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map();
  profile.samples.forEach((nodeId, i) => {
    const node = nodes.get(nodeId);
    if (node.callFrame.functionName === '(idle)') return;
    self.set(node, (self.get(node) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  });
  return self;
}

/** Whose code a frame is, as the report's frameOwner reads it, named for this listing. */
function ownerName(name, url) {
  const owner = frameOwner(name, url, path.join(REPO, 'dist'));
  if (owner.kind === 'agent') return owner.module === 'agent' ? 'pyro-run' : `pyro-run: ${owner.module}`;
  if (owner.kind === 'package') return owner.name;
  if (owner.kind === 'runtime') return `V8: ${name}`;
  return owner.kind;
}

function report(requests, self, threads) {
  const byOwner = new Map();
  const byFunction = new Map();
  let total = 0;
  for (const [node, micros] of self) {
    const { functionName, url, lineNumber } = node.callFrame;
    const owner = ownerName(functionName, url);
    const fn = `${functionName || '(anonymous)'} ${path.basename(url)}:${lineNumber + 1}`;
    total += micros;
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + micros);
    const entry = byFunction.get(fn) ?? { owner, micros: 0 };
    entry.micros += micros;
    byFunction.set(fn, entry);
  }
  const perRequest = (micros) => (micros / requests).toFixed(2).padStart(8);
  process.stdout.write(
    `${contender.label} on ${route}: ${requests} requests in ${seconds} s, ${perRequest(total).trim()} µs a request in the main thread's profile\n\nby owner, µs a request:\n`,
  );
  for (const [owner, micros] of [...byOwner].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${perRequest(micros)}  ${owner}\n`);
  process.stdout.write(`\nevery thread, from Linux's schedstat over the same seconds, µs a request:\n`);
  for (const [name, micros] of threads) process.stdout.write(`${micros.toFixed(2).padStart(8)}  ${name}\n`);
  process.stdout.write('\nby function, µs a request:\n');
  for (const [fn, { owner, micros }] of [...byFunction].sort((a, b) => b[1].micros - a[1].micros).slice(0, top)) {
    process.stdout.write(`${perRequest(micros)}  ${fn}  (${owner})\n`);
  }
}
