// What V8 compiles in the big app's first seconds of load, by whose code it is (issue 21):
// `node bench/compile-wave.mjs [--rounds N] [--seconds S] [--eval] [--unpinned] [--perf]` (needs
// `npm run build`; PYRO_RUN_BENCH_BASELINE=<another built checkout> adds that build's pyro-run).
//
// The big app's worst event-loop stall over a paced load is a burst ~1.5 s in, when the code every
// request runs reaches V8's Maglev threshold together; on one core V8's compile threads take
// turns with the main thread (docs/performance.md, "Known limits"). This counts that wave: each
// contender runs bench/apps/big-app.cjs under the big-app bench's paced load for S seconds with
// `--trace-opt` (one line per finished optimizing compile: its function, tier, and its milliseconds
// on the main thread before and after and on a background thread between) and
// `--perf-basic-prof` (each compiled code object with its script). The k-th finished compile of a
// (tier, name) is the k-th code object of that tier and name in the perf map — both are written
// when the code is installed, in order — which gives each compile its script, and so its origin:
// the app, Node's internals, the OpenTelemetry bundles, pyro-run's own code, other packages.
// Per phase (the app's start-up until the load begins, then 0–1 s, 1–2.5 s where the burst falls,
// the rest of the load): the worst event-loop delay (bench/probes/loop-delay.mjs, per 250 ms slice,
// counted in the phase it starts in), the main thread's time on the core and waiting for it, V8's
// worker threads' time (Linux schedstat, read every 50 ms), and compile milliseconds and jobs by
// origin — as V8 times them: wall time, which on one core includes waiting for it. Then the threads
// over the burst phase's worst slice, and that phase's largest compiles in the last round.
// `--perf` samples the app with Linux `perf` over the load and adds the main thread's time per
// phase by kind of work (bench/lib/perf-work.mjs): V8's compiles, its profiler's logging, the
// collections, and each origin's JavaScript. perf attaches as the load starts, so the first
// phase misses its first tens of milliseconds.
// Rounds interleave the contenders; tables show medians (min–max) over rounds.
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launchApp } from './lib/app.mjs';
import { countOption } from './lib/args.mjs';
import { BIG_APP as APP, BIG_APP_CONTENDERS, BIG_APP_SHAPES } from './lib/big-app.mjs';
import { BENCH, REPO } from './lib/contenders.mjs';
import { interleave } from './lib/interleave.mjs';
import { canPerf, mainThreadWork, recordPerf } from './lib/perf-work.mjs';
import { threadStats } from './lib/side-by-side.mjs';
import { startSink } from './lib/sink.mjs';
import { summary } from './lib/stats.mjs';
import { render, spread } from './lib/table.mjs';
import { findWrk, wrk } from './lib/wrk.mjs';

const USAGE = 'node bench/compile-wave.mjs [--rounds N] [--seconds S] [--eval] [--unpinned] [--perf]';
const PROBE = path.join(BENCH, 'probes/loop-delay.mjs');
/** The big-app bench's paced load: the loop idles between requests. */
const PACED = { connections: 8, pauseMs: 20 };
/** Phase boundaries in ms of load: the app's start, the first requests, the Maglev wave, the rest. */
const PHASES = [
  { label: 'start-up', from: -Infinity, to: 0 },
  { label: '0–1 s', from: 0, to: 1_000 },
  { label: '1–2.5 s', from: 1_000, to: 2_500 },
  { label: '2.5 s–end', from: 2_500, to: Infinity },
];
const BURST = 2;
/** `--trace-opt`'s target names and the perf map's markers for the same tiers (V8's CodeKind). */
const TIER_MARKER = { MAGLEV: '+', TURBOFAN_JS: '*' };
const TOP_JOBS = 12;
/** How often the threads' times are read, ms. */
const TICK_MS = 50;

const rounds = countOption(process.argv, '--rounds', 3, USAGE);
const seconds = countOption(process.argv, '--seconds', 4, USAGE);
const [moduleShape, evalShape] = BIG_APP_SHAPES;
const shape = process.argv.includes('--eval') ? evalShape : moduleShape;
const unpinned = process.argv.includes('--unpinned');
const withPerf = process.argv.includes('--perf');
if (withPerf && !canPerf()) {
  process.stderr.write('--perf needs Linux perf (Debian: linux-perf)\n');
  process.exit(2);
}
/** The phases of the load `--perf` samples (it starts with the load). */
const LOAD_PHASES = PHASES.filter((p) => p.to > 0);
const contenders = BIG_APP_CONTENDERS;
const sink = await startSink();
const bin = findWrk();

/** Whose code a script is. */
function originOf(script) {
  if (script.includes('big-app')) return 'the app';
  if (script.startsWith('node:')) return "Node's internals";
  if (script.includes('/dist/vendor/')) return 'OpenTelemetry (bundled)';
  if (script.includes('/dist/')) return 'pyro-run';
  if (script.includes('/node_modules/')) return 'other packages';
  return 'unknown';
}

/** `(tier marker + name) → scripts of its code objects, in the order they were installed`, from a perf map. */
function codeScripts(mapText) {
  const byKey = new Map();
  for (const line of mapText.split('\n')) {
    // `<address> <size> JS:<marker><'?><name> <script>:<line>:<column>`
    const match = line.match(/^\S+ \S+ JS:([+*])'?(\S*) (.*?)(?::\d+:\d+)?$/);
    if (!match) continue;
    const key = match[1] + match[2];
    if (!byKey.has(key)) byKey.set(key, []);
    byKey.get(key).push(match[3]);
  }
  return byKey;
}

/** The finished compiles of a `--trace-opt` stream: `{ atMs, tier, name, ms, mainMs }`. */
function parseCompile(text, atMs) {
  const match = text.match(/^\[completed compiling \S+ <JSFunction ?(\S*) \(sfi = \S+\)> \(target (\w+)\)(?: OSR)? - took ([\d.]+), ([\d.]+), ([\d.]+) ms\]/);
  if (!match || !(match[2] in TIER_MARKER)) return undefined;
  const [prepare, execute, finalize] = [match[3], match[4], match[5]].map(Number);
  return { atMs, tier: match[2], name: match[1], ms: prepare + execute + finalize, mainMs: prepare + finalize };
}

/** Per thread group of `pid` (its main thread, V8's worker threads, the rest): ns on a CPU and ns runnable but waiting for one (Linux schedstat). */
function threadTimes(pid) {
  const times = { main: { runNs: 0, waitNs: 0 }, v8Workers: { runNs: 0, waitNs: 0 }, other: { runNs: 0, waitNs: 0 } };
  for (const { name, main, runNs, waitNs } of threadStats(pid)) {
    const group = times[main ? 'main' : name === 'V8Worker' ? 'v8Workers' : 'other'];
    group.runNs += runNs;
    group.waitNs += waitNs;
  }
  return times;
}

async function measure(contender) {
  const delayFile = path.join(os.tmpdir(), `compile-wave-delay-${process.pid}-${contender.id}.txt`);
  const withProbe = { ...contender, preload: ['--import', PROBE, ...contender.preload] };
  const env = { ...shape.env, BENCH_LOOP_DELAY_FILE: delayFile, PYROSCOPE_FLUSH_INTERVAL_MS: '10000' };
  const app = await launchApp(withProbe, APP, { sinkUrl: sink.url, extraEnv: env, pinned: !unpinned, nodeFlags: ['--trace-opt', '--perf-basic-prof'] });
  const pid = app.handle.child.pid;
  // Compiles of the start-up count too, and take their places in the perf map's order.
  const compiles = app.handle.stdout
    .split('\n')
    .slice(0, -1)
    .map((text) => parseCompile(text, -1))
    .filter(Boolean);
  let loadFrom = process.hrtime.bigint();
  app.handle.onLine = (text, at) => {
    const compile = parseCompile(text, Number(at - loadFrom) / 1e6);
    if (compile) compiles.push(compile);
  };
  const mapFile = `/tmp/perf-${pid}.map`;
  try {
    const perf = withPerf ? recordPerf(pid, seconds) : undefined;
    loadFrom = process.hrtime.bigint();
    const loadFromMs = Date.now();
    const ticks = [{ atMs: 0, times: threadTimes(pid) }];
    const ticker = setInterval(() => ticks.push({ atMs: Number(process.hrtime.bigint() - loadFrom) / 1e6, times: threadTimes(pid) }), TICK_MS);
    await wrk(bin, `${app.url}/json`, { ...PACED, seconds });
    clearInterval(ticker);
    const perfFile = await perf?.done;
    await app.handle.stop('SIGKILL');
    const work = perfFile ? mainThreadWork(perfFile, pid, loadFrom, LOAD_PHASES, originOf) : undefined;
    const scripts = codeScripts(readFileSync(mapFile, 'utf8'));
    const seen = new Map();
    const jobs = [];
    for (const compile of compiles) {
      const key = TIER_MARKER[compile.tier] + compile.name;
      const k = seen.get(key) ?? 0;
      seen.set(key, k + 1);
      const script = scripts.get(key)?.[k] ?? '';
      jobs.push({ ...compile, origin: originOf(script), script: script.replace(REPO, '.').replace(/.*\/node_modules\//, '') });
    }
    const slices = readFileSync(delayFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(' ').map(Number));
    const phases = PHASES.map(({ from, to }) => {
      const inPhase = jobs.filter((j) => j.atMs >= from && j.atMs < to);
      const byOrigin = {};
      for (const j of inPhase) {
        const sum = (byOrigin[j.origin] ??= { ms: 0, mainMs: 0, jobs: 0 });
        sum.ms += j.ms;
        sum.mainMs += j.mainMs;
        sum.jobs += 1;
      }
      // A 250 ms slice counts in the phase it starts in.
      const delays = slices.filter(([start]) => start >= loadFromMs + from && start < loadFromMs + Math.min(to, seconds * 1_000)).map(([, , max]) => max);
      return { byOrigin, worstMs: delays.length ? Math.max(...delays) : Number.NaN, threads: threadsBetween(ticks, from, to) };
    });
    // The burst phase's worst slice: what the main thread and V8's workers did in it.
    const worst = slices
      .filter(([start]) => start >= loadFromMs + PHASES[BURST].from && start < loadFromMs + PHASES[BURST].to)
      .reduce((a, b) => (b[2] > a[2] ? b : a));
    const worstSlice = { delayMs: worst[2], ...threadsBetween(ticks, worst[0] - loadFromMs, worst[1] - loadFromMs) };
    const burst = jobs
      .filter((j) => j.atMs >= PHASES[BURST].from && j.atMs < PHASES[BURST].to)
      .sort((a, b) => b.ms - a.ms)
      .slice(0, TOP_JOBS);
    return { phases, burst, worstSlice, work };
  } finally {
    await app.handle.stop('SIGKILL');
    rmSync(delayFile, { force: true });
    rmSync(mapFile, { force: true });
  }
}

/** Thread group times (ms) between the ticks nearest `from` and `to` ms of load; from the process's start when `from` is −∞. */
function threadsBetween(ticks, from, to) {
  const at = (ms) => ticks.reduce((best, t) => (Math.abs(t.atMs - ms) < Math.abs(best.atMs - ms) ? t : best));
  const start = { times: Object.fromEntries(Object.keys(ticks[0].times).map((group) => [group, { runNs: 0, waitNs: 0 }])) };
  const [a, b] = [Number.isFinite(from) ? at(from) : start, Number.isFinite(to) ? at(to) : ticks.at(-1)];
  return Object.fromEntries(
    Object.keys(a.times).map((group) => [
      group,
      { runMs: (b.times[group].runNs - a.times[group].runNs) / 1e6, waitMs: (b.times[group].waitNs - a.times[group].waitNs) / 1e6 },
    ]),
  );
}

let raw;
try {
  raw = await interleave(
    rounds,
    contenders,
    (c) => c.id,
    measure,
    (text) => process.stderr.write(`  [compile-wave] ${text}\n`),
  );
} finally {
  await sink.stop();
}

const fmt = (values, digits = 0) => spread(summary(values), digits);
const origins = [...new Set(Object.values(raw).flatMap((runs) => runs.flatMap((r) => r.phases.flatMap((p) => Object.keys(p.byOrigin)))))].sort();
const rows = [];
for (const c of contenders) {
  const runs = raw[c.id];
  const cell = (phase, pick) => fmt(runs.map((r) => pick(r.phases[phase])));
  rows.push([c.label, 'worst loop delay, ms', ...PHASES.map((_, i) => cell(i, (p) => p.worstMs))]);
  rows.push(['', 'main thread on a CPU, ms', ...PHASES.map((_, i) => cell(i, (p) => p.threads.main.runMs))]);
  rows.push(['', 'main thread waiting for one, ms', ...PHASES.map((_, i) => cell(i, (p) => p.threads.main.waitMs))]);
  rows.push(['', "V8's worker threads on a CPU, ms", ...PHASES.map((_, i) => cell(i, (p) => p.threads.v8Workers.runMs))]);
  rows.push(['', 'all compiles, ms (jobs)', ...PHASES.map((_, i) => `${cell(i, (p) => total(p, 'ms'))} (${cell(i, (p) => total(p, 'jobs'))})`)]);
  rows.push(['', '  of them on the main thread, ms', ...PHASES.map((_, i) => cell(i, (p) => total(p, 'mainMs')))]);
  for (const origin of origins) {
    if (!runs.some((r) => r.phases.some((p) => p.byOrigin[origin]))) continue;
    rows.push([
      '',
      `  ${origin}, ms (jobs)`,
      ...PHASES.map((_, i) => `${cell(i, (p) => p.byOrigin[origin]?.ms ?? 0)} (${cell(i, (p) => p.byOrigin[origin]?.jobs ?? 0)})`),
    ]);
  }
}
function total(phase, field) {
  return Object.values(phase.byOrigin).reduce((sum, o) => sum + o[field], 0);
}
const sliceRows = contenders.map((c) => {
  const runs = raw[c.id].map((r) => r.worstSlice);
  return [
    c.label,
    fmt(runs.map((w) => w.delayMs)),
    fmt(runs.map((w) => w.main.runMs)),
    fmt(runs.map((w) => w.main.waitMs)),
    fmt(runs.map((w) => w.v8Workers.runMs)),
    fmt(runs.map((w) => w.other.runMs)),
  ];
});
const title = `compile wave — big app (${shape.id})${unpinned ? ', unpinned' : ', pinned to one core'}, ${rounds} round(s) of ${seconds} s paced load (wrk -c${PACED.connections}, ${PACED.pauseMs} ms between a connection's requests); V8's optimizing compiles (Maglev and TurboFan) by phase of the load; median (min–max) over rounds`;
process.stdout.write(`${render(title, ['contender', 'per phase', ...PHASES.map((p) => p.label)], rows)}\n\n`);
process.stdout.write(
  `${render(`the worst 250 ms slice of ${PHASES[BURST].label}: its delay, and the threads' times over it (read every ${TICK_MS} ms, so ±${TICK_MS} ms at each end)`, ['contender', 'worst delay, ms', 'main thread on a CPU, ms', 'main thread waiting for one, ms', "V8's workers on a CPU, ms", 'other threads on a CPU, ms'], sliceRows)}\n\n`,
);
if (withPerf) {
  const kinds = [...new Set(Object.values(raw).flatMap((runs) => runs.flatMap((r) => r.work.flatMap((w) => Object.keys(w)))))].sort();
  const workRows = [];
  for (const c of contenders) {
    const runs = raw[c.id];
    const cell = (i, pick) => fmt(runs.map((r) => pick(r.work[i])));
    workRows.push([c.label, 'main thread in all', ...LOAD_PHASES.map((_, i) => cell(i, (w) => Object.values(w).reduce((a, b) => a + b, 0)))]);
    for (const kind of kinds) workRows.push(['', `  ${kind}`, ...LOAD_PHASES.map((_, i) => cell(i, (w) => w[kind] ?? 0))]);
  }
  process.stdout.write(
    `${render("the main thread's time by kind of work, ms (Linux perf over the load, each sample in the first kind of V8 work on its stack, else by its leaf-most JavaScript frame's script)", ['contender', 'kind', ...LOAD_PHASES.map((p) => p.label)], workRows)}\n\n`,
  );
}
for (const c of contenders) {
  const last = raw[c.id].at(-1);
  const top = last.burst.map((j) => [j.ms.toFixed(1), j.tier, j.name || '(anonymous)', j.origin, j.script]);
  process.stdout.write(
    `${render(`${c.label}: the ${TOP_JOBS} largest compiles of ${PHASES[BURST].label}, last round`, ['ms', 'tier', 'function', 'origin', 'script'], top)}\n\n`,
  );
}
process.exit(0);
