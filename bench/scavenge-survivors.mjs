// What survives V8's minor collections (issue 21): `node bench/scavenge-survivors.mjs [--rounds N]
// [--seconds S]` (needs `npm run build`; PYRO_RUN_BENCH_BASELINE=<another built checkout> adds that
// build's pyro-run).
//
// A scavenge copies what is alive in the young generation, so its pause grows with what survives
// it, and what survives twice is promoted to the old generation, there to wait for a major
// collection. Read from V8's own account of each scavenge (--trace-gc-nvp: `pause=`, `promoted=`):
// - plain JavaScript, no OpenTelemetry (probes/closure-survivors.cjs): objects that die at once, as
//   fields only, with methods on the prototype, or with closures over the object stored on it (the
//   shape of the OpenTelemetry API's contexts, which build/instrumentation-patches.ts changes);
// - bench/apps/big-app.cjs under the big-app bench's paced load (wrk, 8 connections, 20 ms between
//   a connection's requests), after 3 s of it: bare node, OTel's register, pyro-run with profiles
//   off, pyro-run full.
// Rounds interleave the contenders; tables show medians (min–max) over rounds of each run's median
// scavenge (and its longest pause).
import path from 'node:path';
import { launchApp } from './lib/app.mjs';
import { countOption } from './lib/args.mjs';
import { BIG_APP } from './lib/big-app.mjs';
import { APP_CORE } from './lib/cores.mjs';
import { BENCH, CONTENDERS, NODE, byId } from './lib/contenders.mjs';
import { interleave } from './lib/interleave.mjs';
import { run } from './lib/proc.mjs';
import { startSink } from './lib/sink.mjs';
import { median, summary } from './lib/stats.mjs';
import { render, spread } from './lib/table.mjs';
import { findWrk, wrk } from './lib/wrk.mjs';

const USAGE = 'node bench/scavenge-survivors.mjs [--rounds N] [--seconds S]';
const rounds = countOption(process.argv, '--rounds', 3, USAGE);
const seconds = countOption(process.argv, '--seconds', 10, USAGE);
const PROBE = path.join(BENCH, 'probes/closure-survivors.cjs');
const PROBE_SHAPES = ['fields', 'prototype', 'own closures'];
/** How long the probe makes objects (its default, CLOSURE_SURVIVORS_MS). */
const PROBE_MS = 4000;
const PACED = { connections: 8, pauseMs: 20 };
const WARM_SECONDS = 3;
const GC_TRACE = ['--trace-gc-nvp'];

/** Each scavenge's line of --trace-gc-nvp (`gc=s`) as numbers; the other collections left out. Node 24's `key=value` lines: every run here is on NODE[24] (Node 26 prints JSON). */
function scavenges(stdout) {
  return stdout
    .split('\n')
    .filter((line) => / gc=s /.test(line))
    .map((line) => Object.fromEntries([...line.matchAll(/([\w.]+)=([\d.]+)/g)].map(([, key, value]) => [key, Number(value)])));
}

const perRun = (list) => ({
  count: list.length,
  pauseMs: median(list.map((s) => s.pause)),
  longestMs: Math.max(...list.map((s) => s.pause)),
  promotedKb: median(list.map((s) => s.promoted)) / 1024,
});

async function probe(shape) {
  const { stdout, code } = await run(NODE[24], [...GC_TRACE, PROBE], {
    env: { ...process.env, CLOSURE_SURVIVORS_SHAPE: shape, CLOSURE_SURVIVORS_MS: String(PROBE_MS) },
    core: APP_CORE,
    name: shape,
  });
  if (code !== 0) throw new Error(`probe ${shape} exited ${code}`);
  return perRun(scavenges(stdout));
}

const sink = await startSink();
const bin = findWrk();
const APP_CONTENDERS = [byId('node'), byId('otel'), byId('pyro-none'), byId('pyro'), ...CONTENDERS.filter((c) => c.id === 'pyro-baseline')];

async function app(contender) {
  const launched = await launchApp(contender, BIG_APP, { sinkUrl: sink.url, nodeFlags: GC_TRACE, extraEnv: { BIG_APP_EVAL: '0' } });
  try {
    await wrk(bin, `${launched.url}/json`, { ...PACED, seconds: WARM_SECONDS });
    const from = launched.handle.stdout.length;
    await wrk(bin, `${launched.url}/json`, { ...PACED, seconds });
    return perRun(scavenges(launched.handle.stdout.slice(from)));
  } finally {
    await launched.handle.stop('SIGKILL');
  }
}

const progress = (text) => process.stderr.write(`  [scavenge-survivors] ${text}\n`);
let probes;
let apps;
try {
  probes = await interleave(rounds, PROBE_SHAPES, (shape) => shape, probe, progress);
  apps = await interleave(rounds, APP_CONTENDERS, (c) => c.id, app, progress);
} finally {
  await sink.stop();
}

const fmt = (runs, field, digits) => spread(summary(runs.map((r) => r[field])), digits);
const columns = ['scavenges', 'pause, ms (median)', 'longest pause, ms', 'promoted per scavenge, KB (median)'];
const cells = (runs) => [fmt(runs, 'count', 0), fmt(runs, 'pauseMs', 2), fmt(runs, 'longestMs', 1), fmt(runs, 'promotedKb', 1)];
process.stdout.write(
  `${render(
    `objects that die at once, ${rounds} round(s) of ${PROBE_MS / 1000} s, plain JavaScript (probes/closure-survivors.cjs); median (min–max) over rounds`,
    ['shape', ...columns],
    PROBE_SHAPES.map((shape) => [shape, ...cells(probes[shape])]),
  )}\n\n`,
);
process.stdout.write(
  `${render(
    `big app, ${rounds} round(s): ${seconds} s of the paced load after ${WARM_SECONDS} s of it; median (min–max) over rounds`,
    ['contender', ...columns],
    APP_CONTENDERS.map((c) => [c.label, ...cells(apps[c.id])]),
  )}\n`,
);
process.exit(0);
