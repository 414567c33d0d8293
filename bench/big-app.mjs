// The big-app shape (issue 21): `node bench/big-app.mjs [--rounds N] [--seconds S]` (needs `npm run
// build`; PYRO_RUN_BENCH_BASELINE=<another built checkout> adds that build's pyro-run).
//
// bench/apps/big-app.cjs — 4 000 functions in chains 8 deep, every request a different chain — as
// an ordinary module and compiled with `new Function` (BIG_APP_EVAL=1), under `wrk -c16`, bare and
// with pyro-run (10 s windows, so a run holds several). Per run: requests/s; pyro-run's own hold on
// the event loop per window, read from its debug line (the longest stop of the sampler — the cut,
// or a piece of it — and the longest slice of the pprof build and encoding); and the event loop's
// delay per 250 ms slice (bench/probes/loop-delay.mjs): the worst slice and the 95th percentile of
// the slices' worst, bare for scale (the app's own garbage collection stalls it too). Rounds
// interleave the contenders; the table shows medians (min–max) over rounds.
import path from 'node:path';
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { launchApp } from './lib/app.mjs';
import { BENCH, byId, CONTENDERS } from './lib/contenders.mjs';
import { interleave } from './lib/interleave.mjs';
import { startSink } from './lib/sink.mjs';
import { summary } from './lib/stats.mjs';
import { render, spread } from './lib/table.mjs';
import { findWrk, wrk } from './lib/wrk.mjs';
import { parseWindowCost } from '../dist/src/profiling/window-encoder.js';

const APP = path.join(BENCH, 'apps/big-app.cjs');
const PROBE = path.join(BENCH, 'probes/loop-delay.mjs');
const SHAPES = [
  { id: 'module', env: { BIG_APP_EVAL: '0' } },
  { id: 'new Function', env: { BIG_APP_EVAL: '1' } },
];
const FLUSH_INTERVAL_MS = 10_000;

function option(argv, name, fallback) {
  const i = argv.indexOf(name);
  const value = i === -1 ? fallback : Number(argv[i + 1]);
  if (!Number.isFinite(value) || value < 1) throw new Error('usage: node bench/big-app.mjs [--rounds N] [--seconds S]');
  return value;
}

const rounds = option(process.argv, '--rounds', 3);
const seconds = option(process.argv, '--seconds', 32);
const contenders = [
  { id: 'bare', label: 'bare node', preload: [], env: {} },
  byId('pyro'),
  ...CONTENDERS.filter((c) => c.id === 'pyro-baseline'),
];
const sink = await startSink();
const bin = findWrk();

async function measure({ shape, contender }) {
  const delayFile = path.join(os.tmpdir(), `big-app-delay-${process.pid}-${contender.id}-${shape.id.replace(/\W/g, '_')}.txt`);
  const withProbe = { ...contender, preload: ['--import', PROBE, ...contender.preload] };
  const env = { ...shape.env, BENCH_LOOP_DELAY_FILE: delayFile, PYRO_RUN_LOG_LEVEL: 'debug', PYROSCOPE_FLUSH_INTERVAL_MS: String(FLUSH_INTERVAL_MS) };
  const app = await launchApp(withProbe, APP, { sinkUrl: sink.url, extraEnv: env });
  try {
    const run = await wrk(bin, `${app.url}/json`, { connections: 16, seconds });
    const holds = app.handle.stderr.split('\n').map(parseWindowCost).filter(Boolean);
    const worst = readFileSync(delayFile, 'utf8').trim().split('\n').map((line) => Number(line.split(' ')[2])).sort((a, b) => a - b);
    return {
      rps: run.rps,
      holdMs: holds.length ? Math.max(...holds.map((h) => h.cutMs)) : Number.NaN,
      sliceMs: holds.length ? Math.max(...holds.map((h) => h.longestSliceMs)) : Number.NaN,
      worstMs: worst.at(-1) ?? Number.NaN,
      p95Ms: worst[Math.floor(worst.length * 0.95)] ?? Number.NaN,
    };
  } finally {
    await app.handle.stop('SIGKILL');
    rmSync(delayFile, { force: true });
  }
}

const pairs = SHAPES.flatMap((shape) => contenders.map((contender) => ({ shape, contender })));
const raw = await interleave(rounds, pairs, (p) => `${p.shape.id}/${p.contender.id}`, measure, (text) => process.stderr.write(`  [big-app] ${text}\n`));
const fmt = (values, digits) => spread(summary(values.filter(Number.isFinite)), digits);
const rows = pairs.map((p) => {
  const runs = raw[`${p.shape.id}/${p.contender.id}`];
  return [p.shape.id, p.contender.label, fmt(runs.map((r) => r.rps), 0), fmt(runs.map((r) => r.holdMs), 1), fmt(runs.map((r) => r.sliceMs), 1), fmt(runs.map((r) => r.worstMs), 0), fmt(runs.map((r) => r.p95Ms), 0)];
});
process.stdout.write(`${render(`big app — ${rounds} round(s) of ${seconds} s under wrk -c16, 10 s windows; median (min–max) over rounds`, ['shape', 'contender', 'req/s', 'longest stop per window, ms', 'longest slice, ms', 'worst loop delay, ms', 'p95 of slice worst, ms'], rows)}\n`);
await sink.close?.();
process.exit(0);
