/**
 * --skip (PYRO_RUN_SKIP): processes whose script the user names get no agent, at the cost of the
 * preload's first lines only (a test runner's workers, a migration script run in the same
 * container). The matching rules themselves: launch.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { test } from 'node:test';
import { fixture, registerPath, runCli, runNode } from '../support/child.js';
import { scratchDirs } from '../support/scratch.js';

const { fresh } = scratchDirs('pyro-run-skip-');
const SCRIPT = fixture('apps/hello-span.cjs');

/** The run folders the agent recorded into `out`: one when it ran, none when it was skipped. */
const runsIn = (out: string) => (existsSync(out) ? readdirSync(out) : []);

async function hello(env: Record<string, string>): Promise<string[]> {
  const out = fresh();
  const app = runNode(['--import', registerPath, SCRIPT], { env: { PYRO_RUN_OUTPUT_DIR: out, PYRO_RUN_QUIET: 'on', ...env } });
  const exit = await app.exit();
  assert.equal(exit.code, 0, app.stderr);
  assert.equal(app.stdout, 'hi\n');
  assert.equal(app.stderr, '');
  return runsIn(out);
}

test('a process whose script --skip names runs without the agent; others run with it', async () => {
  assert.equal((await hello({})).length, 1, 'control: the agent records');
  assert.deepEqual(await hello({ PYRO_RUN_SKIP: 'hello-span.cjs' }), [], 'by file name');
  assert.deepEqual(await hello({ PYRO_RUN_SKIP: 'jest-worker,apps/hello-span.cjs' }), [], 'by the end of its path, among others');
  assert.equal((await hello({ PYRO_RUN_SKIP: 'other.cjs' })).length, 1, 'another script');
});

test('pyro-run --skip reaches the app through the env', async () => {
  const out = fresh();
  const cli = runCli(['--skip', 'hello-span.cjs', '--out', out, '--quiet', SCRIPT]);
  const exit = await cli.exit();
  assert.equal(exit.code, 0, cli.stderr);
  assert.equal(cli.stdout, 'hi\n');
  assert.deepEqual(runsIn(out), []);
});
