// Benchmark runner: `node bench/run.mjs [--quick] [benchmark ...]`.
// Full mode runs every round and prints a PASS/FAIL line per goal (information only: a missed goal
// never changes the exit code). --quick runs each benchmark once, briefly, without verdicts; it
// exists so CI can prove the benchmarks still run. The exit code is non-zero only when a benchmark
// itself broke.
import { busyShare } from './lib/busy.mjs';
import { verdictLine } from './lib/goals.mjs';
import { killAll, killAllNow, canPin, pinSelf } from './lib/proc.mjs';
import { LOAD_CORE } from './lib/cores.mjs';
import { writeResult } from './lib/results.mjs';
import startup from './benchmarks/startup.mjs';
import throughput from './benchmarks/throughput.mjs';
import attribution from './benchmarks/attribution.mjs';
import flushPause from './benchmarks/flush-pause.mjs';
import footprint from './benchmarks/footprint.mjs';

const BENCHMARKS = [startup, throughput, attribution, flushPause, footprint];

function usage() {
  return [
    'usage: node bench/run.mjs [--quick] [benchmark ...]',
    '',
    '  --quick   every benchmark once, briefly, no verdicts (CI)',
    '',
    'benchmarks (default: all, in this order):',
    ...BENCHMARKS.map((b) => `  ${b.name.padEnd(12)} ${b.describe}`),
  ].join('\n');
}

function parseArgs(argv) {
  const options = { quick: false, names: [] };
  for (const arg of argv) {
    if (arg === '--quick') options.quick = true;
    else if (arg === '--help' || arg === '-h') options.help = true;
    else if (arg.startsWith('-')) throw new Error(`unknown option ${arg}`);
    else if (BENCHMARKS.some((b) => b.name === arg)) options.names.push(arg);
    else throw new Error(`unknown benchmark "${arg}"`);
  }
  return options;
}

// Whatever happens, no child outlives the runner.
process.on('exit', killAllNow);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    process.stderr.write(`\nbench: ${signal}, stopping every child\n`);
    killAll().finally(() => process.exit(130));
  });
}

async function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error.message}\n\n${usage()}\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(`${usage()}\n`);
    return 0;
  }
  const selected = options.names.length === 0 ? BENCHMARKS : BENCHMARKS.filter((b) => options.names.includes(b.name));
  const pinned = pinSelf(LOAD_CORE);
  process.stdout.write(
    `bench: ${options.quick ? 'quick' : 'full'} mode; ${canPin && pinned ? `app on core 0, runner/load/sink on core ${LOAD_CORE} (taskset)` : 'no taskset: processes are not pinned'}\n\n`,
  );

  const busy = await busyShare();
  if (busy > 0.1)
    process.stdout.write(
      `bench: warning: the cores were ${(busy * 100).toFixed(0)}% busy before starting; other processes compete with the benchmarks and results will be noisy\n\n`,
    );

  const began = Date.now();
  const summaries = [];
  let broken = 0;
  for (const benchmark of selected) {
    const t0 = Date.now();
    const progress = (text) => process.stderr.write(`  [${benchmark.name} ${((Date.now() - t0) / 1000).toFixed(0)}s] ${text}\n`);
    process.stdout.write(`== ${benchmark.name}: ${benchmark.describe}\n`);
    try {
      const outcome = await benchmark.run({ quick: options.quick, progress });
      const seconds = (Date.now() - t0) / 1000;
      if (outcome.skipped) {
        process.stdout.write(`SKIPPED: ${outcome.skipped}\n\n`);
        summaries.push(`${benchmark.name}: skipped (${outcome.skipped})`);
        continue;
      }
      for (const table of outcome.tables) process.stdout.write(`\n${table}\n`);
      if (!options.quick && outcome.goals.length > 0) {
        process.stdout.write('\n');
        for (const g of outcome.goals) process.stdout.write(`${verdictLine(g)}\n`);
      }
      const file = writeResult(benchmark.name, { quick: options.quick, seconds, goals: outcome.goals, ...outcome.data });
      process.stdout.write(`\n(${seconds.toFixed(0)} s; ${file})\n\n`);
      const met = outcome.goals.filter((g) => g.pass === true).length;
      const verdicts = options.quick || outcome.goals.length === 0 ? '' : ` [goals met ${met}/${outcome.goals.length}]`;
      summaries.push(`${outcome.summary}${verdicts}`);
    } catch (error) {
      broken++;
      process.stdout.write(`ERROR in ${benchmark.name}: ${error.stack ?? error}\n\n`);
      summaries.push(`${benchmark.name}: ERROR ${String(error.message ?? error).split('\n')[0]}`);
    } finally {
      await killAll();
    }
  }
  process.stdout.write(`== summary (${((Date.now() - began) / 1000).toFixed(0)} s)\n${summaries.map((s) => `- ${s}`).join('\n')}\n`);
  return broken > 0 ? 1 : 0;
}

process.exitCode = await main();
