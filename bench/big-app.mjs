// The big-app shape (issue 21): `node bench/big-app.mjs [--rounds N] [--seconds S] [--unpinned] [--only ids] [--stall-only]`
// (needs `npm run build`; PYRO_RUN_BENCH_BASELINE=<another built checkout> adds that build's
// pyro-run).
//
// bench/apps/big-app.cjs — 4 000 functions in chains 8 deep, every request a different chain — as
// an ordinary module and compiled with `new Function` (BIG_APP_EVAL=1), bare and with pyro-run
// (10 s windows, so a run holds several), with profiles off (the tracing alone), with profiles off
// and V8's sampler alone beside it (V8's profiler over the tracing, none of pyro-run's profiling),
// and with only pyro-run's preload loaded, its agent skipped. Each run has two phases on one process:
// - stall: for S seconds a paced load (wrk, 8 connections, each pausing 20 ms between requests:
//   ~370 req/s, well below what either contender serves), so the event loop idles between
//   requests and its delay (bench/probes/loop-delay.mjs, the worst per 250 ms slice) is the
//   longest task, not a queue of requests. Reported: the worst slice of the run, the worst once
//   the first LOAD_WARM_MS of load are past (the app's and the instrumentation's code compiled),
//   and the 95th percentile of the slices; and pyro-run's own hold on the loop per window from its
//   debug line (the sampler's longest stop, and the longest slice of the pprof build and encoding).
// - throughput: 8 s of `wrk -c16` (saturated), req/s.
// Rounds interleave the contenders; the table shows medians (min–max) over rounds, and each
// contender's worst stall minus bare node's in the same round.
// --only pyro,pyro-none: bare node and these contenders only; --stall-only: no throughput phase.
// Together they buy rounds: the whole run's worst is decided by the load's cold first second, whose
// spread from round to round is wide, so a median the goal can be judged on needs many rounds.
// --unpinned: the app is not pinned to the app core, so V8's compiler and GC threads can run on
// the other one (which wrk shares) instead of taking turns with the app's main thread — how a
// multi-core host runs it; pinned is how a container limited to one CPU does.
import path from 'node:path';
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { launchApp } from './lib/app.mjs';
import { countOption } from './lib/args.mjs';
import { BIG_APP as APP, BIG_APP_CONTENDERS, BIG_APP_SHAPES as SHAPES } from './lib/big-app.mjs';
import { BENCH } from './lib/contenders.mjs';
import { interleave } from './lib/interleave.mjs';
import { startSink } from './lib/sink.mjs';
import { summary } from './lib/stats.mjs';
import { render, spread } from './lib/table.mjs';
import { readWindowCosts } from './lib/window-costs.mjs';
import { findWrk, wrk } from './lib/wrk.mjs';

const PROBE = path.join(BENCH, 'probes/loop-delay.mjs');
const COST_PROBE = path.join(BENCH, 'probes/window-costs.mjs');
const FLUSH_INTERVAL_MS = 10_000;
const PACED = { connections: 8, pauseMs: 20 };
const SATURATED_SECONDS = 8;
/** Load after which the app's own code and the instrumentation's are compiled and warm. */
const LOAD_WARM_MS = 5_000;

const USAGE = `node bench/big-app.mjs [--rounds N] [--seconds S] [--unpinned] [--only ${BIG_APP_CONTENDERS.filter((c) => c.id !== 'bare')
  .map((c) => c.id)
  .join(',')}] [--stall-only]`;

const rounds = countOption(process.argv, '--rounds', 3, USAGE);
const seconds = countOption(process.argv, '--seconds', 32, USAGE);
const unpinned = process.argv.includes('--unpinned');
const stallOnly = process.argv.includes('--stall-only');
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt === -1 ? undefined : (process.argv[onlyAt + 1] ?? '').split(',');
if (only?.some((id) => !BIG_APP_CONTENDERS.some((c) => c.id === id && id !== 'bare'))) throw new Error(`usage: ${USAGE}`);
const contenders = only ? BIG_APP_CONTENDERS.filter((c) => c.id === 'bare' || only.includes(c.id)) : BIG_APP_CONTENDERS;
const sink = await startSink();
const bin = findWrk();

async function measure({ shape, contender }) {
  const delayFile = path.join(os.tmpdir(), `big-app-delay-${process.pid}-${contender.id}-${shape.id.replace(/\W/g, '_')}.txt`);
  const costFile = `${delayFile}.costs.jsonl`;
  const withProbe = { ...contender, preload: ['--import', PROBE, '--import', COST_PROBE, ...contender.preload] };
  const env = { ...shape.env, BENCH_LOOP_DELAY_FILE: delayFile, BENCH_WINDOW_COST_FILE: costFile, PYROSCOPE_FLUSH_INTERVAL_MS: String(FLUSH_INTERVAL_MS) };
  const app = await launchApp(withProbe, APP, { sinkUrl: sink.url, extraEnv: env, pinned: !unpinned });
  try {
    const loadFrom = Date.now();
    await wrk(bin, `${app.url}/json`, { ...PACED, seconds });
    const pacedUntil = Date.now();
    const { rps } = stallOnly ? { rps: Number.NaN } : await wrk(bin, `${app.url}/json`, { connections: 16, seconds: SATURATED_SECONDS });
    const holds = readWindowCosts(costFile);
    // `<slice start ms> <slice end ms> <max ms> …` per slice; the paced phase's, from the app's start on.
    const slices = readFileSync(delayFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(' ').map(Number))
      .filter(([, end]) => end <= pacedUntil);
    const worstOf = (list) => Math.max(...list.map(([, , max]) => max));
    const sorted = slices.map(([, , max]) => max).sort((a, b) => a - b);
    return {
      rps,
      holdMs: holds.length ? Math.max(...holds.map((h) => h.longestStopMs)) : Number.NaN,
      sliceMs: holds.length ? Math.max(...holds.map((h) => h.longestSliceMs)) : Number.NaN,
      worstMs: worstOf(slices),
      warmWorstMs: worstOf(slices.filter(([start]) => start >= loadFrom + LOAD_WARM_MS)),
      p95Ms: sorted[Math.floor(sorted.length * 0.95)] ?? Number.NaN,
    };
  } finally {
    await app.handle.stop('SIGKILL');
    rmSync(delayFile, { force: true });
    rmSync(costFile, { force: true });
  }
}

const pairs = SHAPES.flatMap((shape) => contenders.map((contender) => ({ shape, contender })));
let raw;
try {
  raw = await interleave(
    rounds,
    pairs,
    (p) => `${p.shape.id}/${p.contender.id}`,
    measure,
    (text) => process.stderr.write(`  [big-app] ${text}\n`),
  );
} finally {
  await sink.stop();
}
const fmt = (values, digits) => spread(summary(values.filter(Number.isFinite)), digits);
const rows = pairs.map((p) => {
  const runs = raw[`${p.shape.id}/${p.contender.id}`];
  const bare = raw[`${p.shape.id}/bare`];
  const above = (field) =>
    fmt(
      runs.map((r, i) => r[field] - bare[i][field]),
      0,
    );
  return [
    p.shape.id,
    p.contender.label,
    fmt(
      runs.map((r) => r.rps),
      0,
    ),
    fmt(
      runs.map((r) => r.holdMs),
      1,
    ),
    fmt(
      runs.map((r) => r.sliceMs),
      1,
    ),
    fmt(
      runs.map((r) => r.worstMs),
      0,
    ),
    above('worstMs'),
    fmt(
      runs.map((r) => r.warmWorstMs),
      0,
    ),
    above('warmWorstMs'),
    fmt(
      runs.map((r) => r.p95Ms),
      0,
    ),
  ];
});
const title = `big app — ${rounds} round(s)${unpinned ? ', the app unpinned' : ''}: ${seconds} s paced (wrk -c${PACED.connections}, ${PACED.pauseMs} ms between a connection's requests) for the event loop${stallOnly ? '' : `, then ${SATURATED_SECONDS} s of wrk -c16 for req/s`}; 10 s windows; median (min–max) over rounds; "above bare": per round, minus bare node's`;
const columns = [
  'shape',
  'contender',
  'req/s (wrk -c16)',
  'longest stop per window, ms',
  'longest slice, ms',
  'worst loop delay, ms',
  'above bare',
  `worst after ${LOAD_WARM_MS / 1000} s of load, ms`,
  'above bare',
  'p95 of slices, ms',
];
process.stdout.write(`${render(title, columns, rows)}\n`);
process.exit(0);
