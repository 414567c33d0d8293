// RSS under load (issue 21): `node bench/memory-under-load.mjs [--rounds N] [--seconds S]`.
//
// The express app (bench/apps/express.cjs) under each contender of lib/contenders.mjs (bare node,
// OTel's register, the combo, pyro-run with profiles off, pyro-run full, and the build named by
// PYRO_RUN_BENCH_BASELINE when set), one at a time on the app core, rounds interleaved: W s (15)
// of `wrk -c16` warm-up, then S s (20) more, its RSS (/proc/<pid>/status) read every 250 ms
// throughout, and V8's heap spaces (bench/probes/heap-spaces.cjs) at the end, still loaded. Prints
// per contender the medians (min–max) over rounds of each round's mean and peak RSS, of the mean
// added to bare node's in the same round, of that added RSS over the combo's (the goal: ≤ 0.6) and
// of the same for the peak, and the heap spaces it is made of.
//
// Why so long a warm-up: under load RSS climbs in steps for 10–16 s (V8 doubles the young
// generation, 16 → 128 MB, each time enough bytes have survived its scavenges, at a different
// moment for each tracer), and a read taken on a step compares one tracer's ramp with another's
// plateau. After it, the old generation still rises and falls between major collections.
import path from 'node:path';
import { launchApp } from './lib/app.mjs';
import { countOption } from './lib/args.mjs';
import { BENCH, CONTENDERS } from './lib/contenders.mjs';
import { interleave } from './lib/interleave.mjs';
import { rssMbOf } from './lib/proc.mjs';
import { startSink } from './lib/sink.mjs';
import { max, mean, ratio, summary } from './lib/stats.mjs';
import { render, spread } from './lib/table.mjs';
import { findWrk, wrk } from './lib/wrk.mjs';

const USAGE = 'node bench/memory-under-load.mjs [--rounds N] [--warmup W] [--seconds S]';
const rounds = countOption(process.argv, '--rounds', 2, USAGE);
const warmup = countOption(process.argv, '--warmup', 15, USAGE);
const seconds = countOption(process.argv, '--seconds', 20, USAGE);
const APP = path.join(BENCH, 'apps/express.cjs');
const PROBE = ['--require', path.join(BENCH, 'probes/heap-spaces.cjs')];
const READ_EVERY_MS = 250;

const sink = await startSink();
const bin = findWrk();
let results;
try {
  results = await interleave(
    rounds,
    CONTENDERS,
    (c) => c.id,
    async (c) => {
      const { handle, url } = await launchApp(c, APP, { sinkUrl: sink.url, nodeFlags: PROBE });
      try {
        await wrk(bin, `${url}/json`, { seconds: warmup });
        const load = wrk(bin, `${url}/json`, { seconds: seconds + 1 });
        // Read while the load still runs (after it, V8 may shrink the young generation), every
        // READ_EVERY_MS: the old generation is a sawtooth between major collections, so one read
        // lands anywhere from its floor to its peak (tens of MB apart) and only their mean compares.
        const reads = [];
        for (let at = 0; at < seconds * 1000; at += READ_EVERY_MS) {
          await new Promise((resolve) => setTimeout(resolve, READ_EVERY_MS));
          reads.push(rssMbOf(handle.child.pid));
        }
        const rss = mean(reads);
        const peak = max(reads);
        const spaces = handle.line(/^heap-spaces (.*)$/, 5_000);
        handle.child.kill('SIGUSR2');
        const heap = JSON.parse((await spaces).match[1]);
        await load;
        return { rss, peak, heap };
      } finally {
        await handle.stop('SIGTERM');
      }
    },
    (what) => process.stderr.write(`  [memory-under-load] ${what}\n`),
  );
} finally {
  await sink.stop();
}

/** A contender's RSS (its mean, or its peak) above bare node's in each round. */
const added = (id, pick) => results[id].map((r, round) => pick(r) - pick(results.node[round]));
const meanRss = (r) => r.rss;
const peakRss = (r) => r.peak;
const rows = CONTENDERS.map((c) => {
  const of = (pick) => spread(summary(results[c.id].map(pick)), 0);
  if (c.id === 'node')
    return [c.label, of(meanRss), of(peakRss), '–', '–', '–', of((r) => r.heap.newSpace), of((r) => r.heap.oldSpace), of((r) => r.heap.heapTotal)];
  const vsCombo = (pick) => spread(summary(added(c.id, pick).map((a, round) => ratio(a, added('combo', pick)[round]))), 2);
  return [
    c.label,
    of(meanRss),
    of(peakRss),
    spread(summary(added(c.id, meanRss)), 0),
    vsCombo(meanRss),
    vsCombo(peakRss),
    of((r) => r.heap.newSpace),
    of((r) => r.heap.oldSpace),
    of((r) => r.heap.heapTotal),
  ];
});
process.stdout.write(
  `${render(`RSS under load — express app, wrk -c16, ${seconds} s after ${warmup} s of warm-up, read every ${READ_EVERY_MS} ms, ${rounds} round(s) interleaved; MB, median (min–max) over rounds of each round's mean and peak; added = mean minus bare node's in the same round; heap spaces at the end`, ['contender', 'RSS', 'peak', 'added', "added / combo's", "peak added / combo's", 'new space', 'old space', 'heap'], rows)}\n`,
);
process.exit(0);
