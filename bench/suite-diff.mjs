// Runs a library's own test suite without and with the agent, and prints what differs, test by
// test: `node bench/suite-diff.mjs <checkout> [-- <command that prints TAP>]` (needs `npm run build`).
//
// For transparency (issue 13): with the agent loaded through NODE_OPTIONS, as a user's test run
// would have it, a library's suite must pass the same tests. Put the checkout where the
// instrumentations hook it — under a `node_modules/<name>/` folder (e.g.
// /tmp/host/node_modules/express) — and install its dev dependencies there; keep it out of this
// repository. Without a command, the checkout's `npm test` script is used when it runs mocha,
// `node --test` or borp (made to print TAP); any other runner needs the command given after `--`
// (fastify: `-- npx borp --reporter tap`, its `npm test` lints first). Runners that print no TAP
// have an adapter in bench/suite-tap/ (node-postgres's own runner, poku's report).
//
// Both runs use the Node that runs this script (its folder first on PATH, so `npx` and `node` in
// the command are the same) and record locally into a temporary folder (nothing is sent, nothing
// is written into the checkout). Prints the counts per run, wall and CPU time (the command and
// all its processes), their ratios, and every test whose outcome differs.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { childrenCpuMs } from './lib/proc.mjs';
import { registerPathOf } from './lib/register-path.mjs';
import { compareRuns, parseTap, tally } from './lib/tap.mjs';
import { render, times } from './lib/table.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const register = registerPathOf(root);

function usage(message) {
  console.error(`${message}\nusage: node bench/suite-diff.mjs <checkout> [-- <command that prints TAP>]`);
  process.exit(2);
}

/** The checkout's test command, made to print TAP; undefined when its runner is not one we know. */
function tapCommand(checkout) {
  const script = JSON.parse(readFileSync(path.join(checkout, 'package.json'), 'utf8')).scripts?.test;
  if (typeof script !== 'string') return undefined;
  if (/^mocha\b/.test(script)) return `npx ${script.replace(/\s--reporter[ =]\S+/g, '')} --reporter tap`;
  if (/^node --test\b/.test(script)) return script.replace(/^node --test\b/, 'node --test --test-reporter=tap');
  if (/^borp\b/.test(script)) return `npx ${script.replace(/\s(-r|--reporter)[ =]\S+/g, '')} --reporter tap`;
  return undefined;
}

/** Runs `command` in a shell in `checkout`; its TAP, wall and CPU seconds, and exit code. */
function runSuite(command, checkout, env) {
  return new Promise((resolve, reject) => {
    const cpuBefore = childrenCpuMs();
    const started = performance.now();
    // The shell is waited for, and it waits for its children: their CPU time is counted too.
    const child = spawn('sh', ['-c', command], { cwd: checkout, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      resolve({ tap: stdout, stderr, code: code ?? signal, wall: (performance.now() - started) / 1000, cpu: (childrenCpuMs() - cpuBefore) / 1000 });
    });
  });
}

async function main() {
  const dash = process.argv.indexOf('--');
  const args = dash < 0 ? process.argv.slice(2) : process.argv.slice(2, dash);
  if (args.length !== 1) usage('one checkout, please');
  const checkout = path.resolve(args[0]);
  const command = dash < 0 ? tapCommand(checkout) : process.argv.slice(dash + 1).join(' ');
  if (!command) usage(`${checkout}: its test script runs neither mocha nor node --test; give the command that prints TAP after --`);

  const out = mkdtempSync(path.join(tmpdir(), 'pyro-run-suite-diff-'));
  const base = { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}` };
  delete base.NODE_OPTIONS;
  const agent = { ...base, NODE_OPTIONS: `--import ${register}`, PYRO_RUN_OUTPUT_DIR: out, PYRO_RUN_QUIET: 'on' };
  console.log(`${path.basename(checkout)}: ${command}`);
  try {
    const runs = [];
    for (const [label, env] of [
      ['without', base],
      ['with the agent', agent],
    ]) {
      process.stderr.write(`  running ${label} …\n`);
      const run = await runSuite(command, checkout, env);
      runs.push({ label, ...run, results: parseTap(run.tap) });
    }
    const [without, withAgent] = runs;
    const rows = runs.map((run) => {
      const counts = tally(run.results);
      return [
        run.label,
        String(run.code),
        String(counts.tests),
        String(counts.pass),
        String(counts.fail),
        String(counts.skip + counts.todo),
        run.wall.toFixed(1),
        run.cpu.toFixed(1),
      ];
    });
    rows.push(['with / without', '', '', '', '', '', times(withAgent.wall / without.wall), times(withAgent.cpu / without.cpu)]);
    console.log(
      render(`\n${path.basename(checkout)}'s suite without and with the agent`, ['run', 'exit', 'tests', 'pass', 'fail', 'skip/todo', 'wall s', 'CPU s'], rows),
    );
    for (const run of runs) if (run.results.length === 0) console.log(`\n${run.label}: no TAP results; its stderr ends:\n${run.stderr.slice(-2000)}`);
    const changed = compareRuns(without.results, withAgent.results);
    console.log(changed.length === 0 ? '\nidentical: every test has the same outcome with the agent as without it' : `\n${changed.length} tests differ:`);
    for (const change of changed) console.log(`  ${change.without} → ${change.with}: ${change.name}`);
    const failingBoth = withAgent.results.filter((r) => r.outcome === 'fail' && without.results.some((b) => b.name === r.name && b.outcome === 'fail'));
    if (failingBoth.length > 0) console.log(`\nfailing both ways (the suite's own, here):\n${failingBoth.map((r) => `  ${r.name}`).join('\n')}`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

await main();
