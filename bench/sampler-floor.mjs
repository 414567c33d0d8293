// The sampler's floor by code shape (issue 21): `node bench/sampler-floor.mjs [--rounds N] [--seconds S]`.
//
// V8's sampling profiler alone (bench/contenders/sampler-alone.mjs: @datadog/pprof's time profiler
// at 10 ms, no contexts, no export) side by side with bare node on one core
// (lib/side-by-side.mjs: CPU time per request, both apps loaded at once by their own wrk -c16), on
// three shapes: the express route (bench/apps/express.cjs), and the big app (bench/apps/big-app.cjs,
// 4 000 functions in chains 8 deep) as a module and compiled with `new Function`. The same sampler
// at a 1 s interval tells apart what the samples cost from what V8's profiler costs by being on
// (code events logged for every function compiled or optimized). Prints, per shape, the
// contender's requests per CPU second over bare's (1.00 = free), median (min–max) over rounds.
import path from 'node:path';
import { countOption } from './lib/args.mjs';
import { BENCH, SAMPLER_ALONE } from './lib/contenders.mjs';
import { sideBySide } from './lib/side-by-side.mjs';
import { startSink } from './lib/sink.mjs';
import { summary } from './lib/stats.mjs';
import { render, spread } from './lib/table.mjs';
import { findWrk } from './lib/wrk.mjs';

const USAGE = 'node bench/sampler-floor.mjs [--rounds N] [--seconds S]';

const rounds = countOption(process.argv, '--rounds', 3, USAGE);
const seconds = countOption(process.argv, '--seconds', 15, USAGE);
const SHAPES = [
  { id: 'express route', app: 'apps/express.cjs', env: {} },
  { id: 'big app, module', app: 'apps/big-app.cjs', env: { BIG_APP_EVAL: '0' } },
  { id: 'big app, new Function', app: 'apps/big-app.cjs', env: { BIG_APP_EVAL: '1' } },
];
const SAMPLER_1S = { ...SAMPLER_ALONE, id: 'sampler-1s', label: 'V8 sampler alone, 1 s', env: { PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS: '1000000' } };
const BARE = { id: 'node', label: 'bare node', preload: [], env: {} };
const contenders = [SAMPLER_ALONE, SAMPLER_1S];

/** A contender running the app in `shape` (its env on top of the contender's). */
const withShape = (c, shape) => ({ ...c, env: { ...c.env, ...shape.env } });

const sink = await startSink();
const bin = findWrk();
const rows = [];
try {
  for (const shape of SHAPES) {
    for (const contender of contenders) {
      const ratios = [];
      for (let round = 0; round < rounds; round++) {
        process.stderr.write(`  [sampler-floor] ${shape.id}: ${contender.label} / bare, round ${round + 1}/${rounds}\n`);
        const r = await sideBySide(bin, [withShape(contender, shape), withShape(BARE, shape)], path.join(BENCH, shape.app), sink.url, {
          seconds,
          connections: 16,
          round,
        });
        ratios.push(r.perCpu);
      }
      rows.push([shape.id, contender.label, spread(summary(ratios), 3)]);
    }
  }
} finally {
  await sink.stop();
}
process.stdout.write(
  `${render(`sampler floor — ${rounds} round(s) of ${seconds} s side by side with bare node on one core; requests per CPU second, contender / bare; median (min–max)`, ['shape', 'contender', 'req per CPU s vs bare'], rows)}\n`,
);
process.exit(0);
