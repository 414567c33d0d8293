// RSS under load (issue 21): `node bench/memory-under-load.mjs [--rounds N] [--seconds S]`.
//
// The express app (bench/apps/express.cjs) under each contender of lib/contenders.mjs (bare node,
// OTel's register, the combo, pyro-run with profiles off, pyro-run full, and the build named by
// PYRO_RUN_BENCH_BASELINE when set), one at a time on the app core, rounds interleaved: 3 s of
// `wrk -c16` warm-up, then S s (20) more, then its RSS (/proc/<pid>/status) and V8's heap spaces
// (bench/probes/heap-spaces.cjs) while still loaded. Prints per contender the medians (min–max)
// over rounds of RSS, of RSS added to bare node's in the same round, and of that added RSS over the
// combo's (the goal: ≤ 0.6), and the heap spaces it is made of.
import path from 'node:path';
import { launchApp } from './lib/app.mjs';
import { countOption } from './lib/args.mjs';
import { BENCH, CONTENDERS } from './lib/contenders.mjs';
import { interleave } from './lib/interleave.mjs';
import { rssMbOf } from './lib/proc.mjs';
import { startSink } from './lib/sink.mjs';
import { ratio, summary } from './lib/stats.mjs';
import { render, spread } from './lib/table.mjs';
import { findWrk, wrk } from './lib/wrk.mjs';

const USAGE = 'node bench/memory-under-load.mjs [--rounds N] [--seconds S]';
const rounds = countOption(process.argv, '--rounds', 2, USAGE);
const seconds = countOption(process.argv, '--seconds', 20, USAGE);
const APP = path.join(BENCH, 'apps/express.cjs');
const PROBE = ['--require', path.join(BENCH, 'probes/heap-spaces.cjs')];

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
        await wrk(bin, `${url}/json`, { seconds: 3 });
        const load = wrk(bin, `${url}/json`, { seconds: seconds + 1 });
        // Read while the load still runs: after it, V8 may shrink the young generation.
        await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
        const rss = rssMbOf(handle.child.pid);
        const spaces = handle.line(/^heap-spaces (.*)$/, 5_000);
        handle.child.kill('SIGUSR2');
        const heap = JSON.parse((await spaces).match[1]);
        await load;
        return { rss, heap };
      } finally {
        await handle.stop('SIGTERM');
      }
    },
    (what) => process.stderr.write(`  [memory-under-load] ${what}\n`),
  );
} finally {
  await sink.stop();
}

const added = (id) => results[id].map((r, round) => r.rss - results.node[round].rss);
const rows = CONTENDERS.map((c) => {
  const of = (pick) => spread(summary(results[c.id].map(pick)), 0);
  const vsCombo = c.id === 'node' ? '–' : spread(summary(added(c.id).map((a, round) => ratio(a, added('combo')[round]))), 2);
  return [c.label, of((r) => r.rss), c.id === 'node' ? '–' : spread(summary(added(c.id)), 0), vsCombo, of((r) => r.heap.newSpace), of((r) => r.heap.oldSpace), of((r) => r.heap.heapTotal)];
});
process.stdout.write(
  `${render(`RSS under load — express app, wrk -c16, ${seconds} s after 3 s of warm-up, ${rounds} round(s) interleaved; MB, median (min–max); added = minus bare node's RSS in the same round`, ['contender', 'RSS', 'added', 'added / combo\'s', 'new space', 'old space', 'heap'], rows)}\n`,
);
process.exit(0);
