// Soak: `node test/faults/soak.mjs [--minutes N] [--phase-seconds S] [--strict]` (needs `npm run build`).
//
// An app under pyro-run (test/fixtures/faults/steady-server.cjs, `--import dist/preload/register.js`) serves
// a steady closed-loop load for N minutes (default 10) while its backend (the test receiver, one for
// Pyroscope /ingest and OTLP) flaps: healthy, 500s, healthy, hangs, … each phase S seconds
// (default 40/30/40/30). A probe preload (test/fixtures/faults/probe.cjs) records RSS, open file
// descriptors, live handles (process.getActiveResourcesInfo) and event-loop delay every second; the
// app's live heap is read after a full GC (--expose-gc, /memory?gc=1) once per row.
//
// Prints one table row per 10 s, then the trend after warm-up (least-squares slope per minute) of
// each series and a verdict. The exit code is 0 unless the soak itself broke; with --strict, a
// failed verdict exits 1 too. Figures are also written to test-artifacts/faults/soak-<time>.json.
//
// The engine is shared with the CI version (test/faults/soak-short.test.ts, 90 s):
// dist/test/faults/support/soak.js.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Growth a long run may show after warm-up, per minute. */
const BOUNDS = { liveHeapMbPerMin: 0.2, outsideHeapMbPerMin: 0.3, rssMbPerMin: 2, fdsGrowth: 6, handlesGrowth: 6 };
const ROW_MS = 10_000;

function usage() {
  return 'usage: node test/faults/soak.mjs [--minutes N (default 10)] [--phase-seconds S (healthy/failing phase length, default 40/30)] [--strict]';
}

function parseArgs(argv) {
  const options = { minutes: 10, phaseSeconds: undefined, strict: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--strict') options.strict = true;
    else if (arg === '--help' || arg === '-h') options.help = true;
    else if (arg === '--minutes' || arg === '--phase-seconds') {
      const value = Number(argv[++i]);
      if (!Number.isFinite(value) || value <= 0) throw new Error(`${arg} needs a positive number`);
      if (arg === '--minutes') options.minutes = value;
      else options.phaseSeconds = value;
    } else throw new Error(`unknown option ${arg}`);
  }
  return options;
}

/** Phase lengths rounded to whole rows, so each row belongs to one phase. */
const rows = (seconds) => Math.max(1, Math.round((seconds * 1000) / ROW_MS)) * ROW_MS;

async function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error.message}\n${usage()}\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(`${usage()}\n`);
    return 0;
  }
  let engine;
  try {
    engine = await import(pathToFileURL(path.join(root, 'dist/test/faults/support/soak.js')).href);
  } catch (error) {
    process.stderr.write(`soak: cannot load the built soak engine (run \`npm run build\` first): ${error.message}\n`);
    return 2;
  }
  const healthyMs = rows(options.phaseSeconds ?? 40);
  const failingMs = rows(options.phaseSeconds ?? 30);
  const durationMs = Math.round(options.minutes * 60_000);
  const warmupMs = Math.min(120_000, Math.round(durationMs / 5));
  process.stdout.write(
    `soak: ${options.minutes} min, backend phases healthy ${healthyMs / 1000} s / 500 ${failingMs / 1000} s / healthy / hang ${failingMs / 1000} s, warm-up ${warmupMs / 1000} s\n\n`,
  );
  process.stdout.write(`${engine.tableHeader()}\n`);
  const result = await engine.soak({
    durationMs,
    rowMs: ROW_MS,
    warmupMs,
    settleMs: 60_000,
    phases: [
      ['healthy', healthyMs],
      ['500', failingMs],
      ['healthy', healthyMs],
      ['hang', failingMs],
    ],
    onRow: (row) => process.stdout.write(`${engine.tableRow(row)}\n`),
  });

  const t = result.trends;
  const g = result.outsideHeapGrowth;
  const checks = [
    ['live heap (after GC)', `${t.liveHeapMb.perMinute.toFixed(3)} MB/min`, t.liveHeapMb.perMinute < BOUNDS.liveHeapMbPerMin, `< ${BOUNDS.liveHeapMbPerMin}`],
    // Judged between settled states: the queued bodies make it a sawtooth (outsideHeapGrowth).
    [
      'external + array buffers',
      `${g.perMinute.toFixed(3)} MB/min settled (${g.from.mb} MB at ${g.from.t} s → ${g.to.mb} MB at ${g.to.t} s; all rows ${t.outsideHeapMb.perMinute.toFixed(3)})`,
      g.perMinute < BOUNDS.outsideHeapMbPerMin,
      `< ${BOUNDS.outsideHeapMbPerMin}`,
    ],
    [
      'RSS',
      `${t.rssMb.perMinute.toFixed(2)} MB/min (${t.rssMb.first} → ${t.rssMb.last} MB)`,
      t.rssMb.perMinute < BOUNDS.rssMbPerMin,
      `< ${BOUNDS.rssMbPerMin}`,
    ],
    ['open fds', `${t.fds.min}..${t.fds.max}, last ${t.fds.last}`, t.fds.last - t.fds.min <= BOUNDS.fdsGrowth, `last - min ≤ ${BOUNDS.fdsGrowth}`],
    [
      'live handles',
      `${t.handles.min}..${t.handles.max}, last ${t.handles.last}`,
      t.handles.last - t.handles.min <= BOUNDS.handlesGrowth,
      `last - min ≤ ${BOUNDS.handlesGrowth}`,
    ],
    [
      'uploads resume',
      `${result.healthyPhases - result.healthyPhasesWithoutDelivery}/${result.healthyPhases} healthy phases delivered`,
      result.healthyPhasesWithoutDelivery === 0,
      'all',
    ],
    [
      'SIGTERM',
      `${result.shutdown.signal ?? `exit ${result.shutdown.code}`} after ${result.shutdown.ms} ms`,
      result.shutdown.signal === 'SIGTERM' && result.shutdown.ms < 5500,
      'SIGTERM < 5.5 s',
    ],
  ];
  process.stdout.write(
    `\ntrend after warm-up (${warmupMs / 1000} s), ${result.requests} requests, event-loop delay p99 median ${result.loopP99MedianMs.toFixed(1)} ms, max ${result.loopMaxMs.toFixed(1)} ms\n`,
  );
  for (const [name, value, ok, bound] of checks) process.stdout.write(`  ${ok ? 'ok  ' : 'FAIL'} ${name.padEnd(26)} ${value}  (bound ${bound})\n`);
  const passed = checks.every(([, , ok]) => ok);
  process.stdout.write(`\nverdict: ${passed ? 'PASS — no growth trend after warm-up' : 'FAIL — see above'}\n`);
  if (result.warnings.length > 0) process.stdout.write(`pyro-run warnings (${result.warnings.length}):\n${result.warnings.map((w) => `  ${w}`).join('\n')}\n`);

  try {
    const dir = path.join(root, 'test-artifacts', 'faults');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `soak-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify({ options, bounds: BOUNDS, ...result, passed }, null, 2));
    process.stdout.write(`figures: ${path.relative(process.cwd(), file)}\n`);
  } catch {
    // A read-only checkout: the table above is the record.
  }
  return passed || !options.strict ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`soak broke: ${error.stack ?? error}\n`);
    process.exitCode = 2;
  },
);
