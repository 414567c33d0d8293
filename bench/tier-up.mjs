// The big app's first seconds under load (issue 21): `node bench/tier-up.mjs [--rounds N] [--steps K]
// [--step-seconds S] [--eval]` (needs `npm run build`; PYRO_RUN_BENCH_BASELINE=<another built
// checkout> adds that build's pyro-run).
//
// bench/apps/big-app.cjs is saturated (wrk -c16) from the moment it listens, in K consecutive steps
// of S seconds; per step, each contender's CPU per request (every thread of the process) and the
// part of it spent off the main thread — on this shape, V8 compiling the app's 4 000 functions on
// its background threads, which on the one core the app is pinned to take turns with the requests.
// It shows how long the app takes to reach its steady state and what a request costs once there,
// bare and with each contender. The contenders: bare node; pyro-run's preload loaded with its agent
// skipped (PYRO_RUN_SKIP: what loading the preload alone moves); profiles off (tracing only); full.
// Rounds interleave the contenders; the table shows medians (min–max) over rounds.
import { launchApp } from './lib/app.mjs';
import { countOption } from './lib/args.mjs';
import { BIG_APP as APP, BIG_APP_CONTENDERS, BIG_APP_SHAPES } from './lib/big-app.mjs';
import { interleave } from './lib/interleave.mjs';
import { mainThreadCpuNs, processCpuNs } from './lib/side-by-side.mjs';
import { startSink } from './lib/sink.mjs';
import { summary } from './lib/stats.mjs';
import { render, spread } from './lib/table.mjs';
import { findWrk, wrk } from './lib/wrk.mjs';

const USAGE = 'node bench/tier-up.mjs [--rounds N] [--steps K] [--step-seconds S] [--eval]';

const rounds = countOption(process.argv, '--rounds', 3, USAGE);
const steps = countOption(process.argv, '--steps', 6, USAGE);
const stepSeconds = countOption(process.argv, '--step-seconds', 3, USAGE);
const [moduleShape, evalShape] = BIG_APP_SHAPES;
const shape = process.argv.includes('--eval') ? evalShape : moduleShape;
const contenders = BIG_APP_CONTENDERS;
const sink = await startSink();
const bin = findWrk();

/** Per step: CPU µs per request, and the ms of CPU the process's other threads used. */
async function measure(contender) {
  const app = await launchApp(contender, APP, { sinkUrl: sink.url, extraEnv: shape.env });
  const pid = app.handle.child.pid;
  try {
    const out = [];
    for (let step = 0; step < steps; step++) {
      const [all0, main0] = [processCpuNs(pid), mainThreadCpuNs(pid)];
      const { requests } = await wrk(bin, `${app.url}/json`, { connections: 16, seconds: stepSeconds });
      const [all1, main1] = [processCpuNs(pid), mainThreadCpuNs(pid)];
      out.push({ usPerRequest: (all1 - all0) / 1000 / requests, offMainMs: (all1 - all0 - (main1 - main0)) / 1e6 });
    }
    return out;
  } finally {
    await app.handle.stop('SIGKILL');
  }
}

let raw;
try {
  raw = await interleave(
    rounds,
    contenders,
    (c) => c.id,
    measure,
    (text) => process.stderr.write(`  [tier-up] ${text}\n`),
  );
} finally {
  await sink.stop();
}
const cell = (runs, step, field, digits) => spread(summary(runs.map((r) => r[step][field]).filter(Number.isFinite)), digits);
const stepNames = Array.from({ length: steps }, (_, i) => `${i * stepSeconds}–${(i + 1) * stepSeconds} s`);
const table = (field, digits, what) =>
  render(
    `big app (${shape.id}) saturated from its start — ${what}, per ${stepSeconds} s step; ${rounds} round(s), median (min–max)`,
    ['contender', ...stepNames],
    contenders.map((c) => [c.label, ...stepNames.map((_, step) => cell(raw[c.id], step, field, digits))]),
  );
process.stdout.write(
  `${table('usPerRequest', 0, 'CPU µs per request, every thread')}\n\n${table('offMainMs', 0, 'ms of CPU off the main thread (V8 compiling, GC helpers)')}\n`,
);
process.exit(0);
