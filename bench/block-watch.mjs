// What watching for event-loop blocks costs when nothing blocks: `node bench/block-watch.mjs
// [--rounds N] [--seconds S]` (needs `npm run build` and wrk).
//
// pyro-run full with the watch off (PYRO_RUN_BLOCK_THRESHOLD_MS=off) against the same with it on
// at its default threshold (100 ms: a timer every 50 ms), both apps at once on the app core
// (lib/side-by-side.mjs), in two situations per round:
//   load  the express app under its own wrk -c16: requests per CPU second, off over on (above 1:
//         the watch costs); the same measure as bench/pair.mjs;
//   idle  the same apps with no request for S seconds: each process's CPU time per second (every
//         thread's, Linux schedstat), which the watch's timer wakes 20 times a second.
// Prints each round and the median (min–max) over rounds.
import path from 'node:path';
import { launchApp } from './lib/app.mjs';
import { countOption } from './lib/args.mjs';
import { BENCH, byId } from './lib/contenders.mjs';
import { processCpuNs, sideBySide } from './lib/side-by-side.mjs';
import { startSink } from './lib/sink.mjs';
import { summary } from './lib/stats.mjs';
import { spread } from './lib/table.mjs';
import { findWrk } from './lib/wrk.mjs';

const USAGE = 'node bench/block-watch.mjs [--rounds N] [--seconds S]';
const rounds = countOption(process.argv, '--rounds', 4, USAGE);
const seconds = countOption(process.argv, '--seconds', 12, USAGE);

const full = byId('pyro');
const off = { ...full, id: 'watch-off', label: 'blocks off', env: { ...full.env, PYRO_RUN_BLOCK_THRESHOLD_MS: 'off' } };
const on = { ...full, id: 'watch-on', label: 'blocks on (100 ms)', env: { ...full.env, PYRO_RUN_BLOCK_THRESHOLD_MS: '100' } };
const APP = path.join(BENCH, 'apps/express.cjs');

/** Both apps launched, left alone for `seconds`: CPU µs per second of each. */
async function idle(sinkUrl, round) {
  const order = round % 2 === 0 ? [off, on] : [on, off];
  const apps = [];
  try {
    for (const contender of order) apps.push({ contender, ...(await launchApp(contender, APP, { sinkUrl })) });
    // Past the start-up's own work (the first gathers, the warm-up) before measuring.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const before = apps.map((app) => processCpuNs(app.handle.child.pid));
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const after = apps.map((app) => processCpuNs(app.handle.child.pid));
    const usPerSecond = (contender) => {
      const i = apps.findIndex((app) => app.contender === contender);
      return (after[i] - before[i]) / 1000 / seconds;
    };
    return { off: usPerSecond(off), on: usPerSecond(on) };
  } finally {
    await Promise.all(apps.map((app) => app.handle.stop('SIGKILL')));
  }
}

const sink = await startSink();
const bin = findWrk();
const loadRatios = [];
const idleOff = [];
const idleOn = [];
try {
  for (let round = 0; round < rounds; round++) {
    const load = await sideBySide(bin, [off, on], APP, sink.url, { seconds, connections: 16, round });
    loadRatios.push(load.perCpu);
    const quiet = await idle(sink.url, round);
    idleOff.push(quiet.off);
    idleOn.push(quiet.on);
    process.stdout.write(
      `round ${round + 1}/${rounds}: load ${off.label} ${load.a.cpuMicrosPerRequest.toFixed(0)} µs CPU a request, ${on.label} ${load.b.cpuMicrosPerRequest.toFixed(0)}; ` +
        `requests per CPU second off/on ${load.perCpu.toFixed(3)} · idle CPU off ${quiet.off.toFixed(0)} µs/s, on ${quiet.on.toFixed(0)} µs/s\n`,
    );
  }
} finally {
  await sink.stop();
}
process.stdout.write(`under load, requests per CPU second, blocks off / on: ${spread(summary(loadRatios), 3)} over ${rounds} rounds of ${seconds} s\n`);
process.stdout.write(
  `idle, CPU µs per second: off ${spread(summary(idleOff), 0)}, on ${spread(summary(idleOn), 0)}; on − off ${spread(
    summary(idleOn.map((value, i) => value - idleOff[i])),
    0,
  )}\n`,
);
process.exit(0);
