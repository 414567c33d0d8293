// Two contenders side by side on the express app: `node bench/pair.mjs <a> <b> [--rounds N] [--seconds S] [--warmup W]`.
//
// The A/B behind the cost-by-part rows of docs/performance.md's "CPU per request": `a` and `b`
// are contender ids of lib/contenders.mjs (`node`, `otel`, `combo`, `pyro-none`, `pyro`, `sampler`,
// `pyro-none-sampler`, the side-only ones; `pyro-baseline` when PYRO_RUN_BENCH_BASELINE names
// another built checkout, `dd` when PYRO_RUN_BENCH_DD_TRACE names a folder with dd-trace), each
// optionally followed by `@` and a JSON object of extra environment
// (`'pyro@{"OTEL_NODE_DISABLED_INSTRUMENTATIONS":"router"}'`).
// Both apps run at once on the app core under their own wrk -c16 (lib/side-by-side.mjs), W seconds
// of warm-up (15: the steady state, lib/side-by-side.mjs says why) then S seconds (15, which holds
// one profile flush); prints each round and the median (min–max) of a's requests per CPU second
// over b's (above 1: a is the cheaper).
import path from 'node:path';
import { countOption } from './lib/args.mjs';
import { BENCH, contenderOf } from './lib/contenders.mjs';
import { STEADY_WARMUP_SECONDS, sideBySide } from './lib/side-by-side.mjs';
import { startSink } from './lib/sink.mjs';
import { summary } from './lib/stats.mjs';
import { spread } from './lib/table.mjs';
import { findWrk } from './lib/wrk.mjs';

const USAGE = 'node bench/pair.mjs <a> <b> [--rounds N] [--seconds S] [--warmup W]   (a, b: contender ids, each optionally id@{"ENV":"value"})';

const rounds = countOption(process.argv, '--rounds', 4, USAGE);
const seconds = countOption(process.argv, '--seconds', 15, USAGE);
const warmupSeconds = countOption(process.argv, '--warmup', STEADY_WARMUP_SECONDS, USAGE);
const specs = process.argv.slice(2).filter((arg, i, all) => !arg.startsWith('--') && !all[i - 1]?.startsWith('--'));
if (specs.length !== 2) throw new Error(`usage: ${USAGE}`);

const [a, b] = specs.map((spec) => {
  const contender = contenderOf(spec);
  if (!contender) throw new Error(`unknown contender ${spec}; usage: ${USAGE}`);
  return contender;
});

const sink = await startSink();
const bin = findWrk();
const ratios = [];
try {
  for (let round = 0; round < rounds; round++) {
    const r = await sideBySide(bin, [a, b], path.join(BENCH, 'apps/express.cjs'), sink.url, { seconds, warmupSeconds, connections: 16, round });
    ratios.push(r.perCpu);
    process.stdout.write(
      `round ${round + 1}/${rounds}: ${a.label} ${r.a.cpuMicrosPerRequest.toFixed(0)} µs CPU a request, ${b.label} ${r.b.cpuMicrosPerRequest.toFixed(0)}; requests per CPU second a/b ${r.perCpu.toFixed(3)}\n`,
    );
  }
} finally {
  await sink.stop();
}
process.stdout.write(
  `${a.label} / ${b.label}, requests per CPU second: ${spread(summary(ratios), 3)} over ${rounds} rounds of ${seconds} s after ${warmupSeconds} s of warm-up\n`,
);
process.exit(0);
