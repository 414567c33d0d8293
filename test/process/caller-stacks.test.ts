/**
 * A library that keeps the stack of the app's call gets the app's frames with the agent as without
 * it: mysql's long stack traces append the stack taken in `query()`, which V8 cuts to
 * `Error.stackTraceLimit` (10) frames — and the instrumentation's wrapper, the guard and the context
 * calls put about ten frames of ours between the app and mysql. The limit is raised by our frames
 * while the library's function runs, so the same app frames are there, ours beside them. Real
 * MariaDB.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fileOfStackLine, isAgentFile } from '../support/agent-files.js';
import { fixture, registerPath, runNode } from '../support/child.js';
import { type MariaDb, startMariaDb } from '../support/mariadb.js';
import { scratchDirs } from '../support/scratch.js';
import { skipUnless } from '../support/installed.js';

const { fresh: tempDir } = scratchDirs('pyro-run-caller-stacks-');
const skip = skipUnless('mariadb');
let mariadb: MariaDb;

before(async () => {
  if (skip) return;
  mariadb = await startMariaDb();
});
after(async () => {
  await mariadb?.stop();
});

/** A frame of the agent's: its files, or the async-context machinery it runs the wrapper in. */
const ours = (line: string) => isAgentFile(fileOfStackLine(line)) || line.includes('node:internal/async_local_storage');

async function callSite(args: string[]): Promise<string[]> {
  const app = runNode([...args, fixture('apps/mysql-call-site.cjs')], {
    env: { MYSQL_URL: mariadb.url, PYRO_RUN_OUTPUT_DIR: tempDir(), PYRO_RUN_QUIET: 'on' },
  });
  assert.equal((await app.exit()).code, 0, app.stderr);
  return JSON.parse(app.stdout.trim().split('\n')[0]!) as string[];
}

test("mysql's long stack trace of a failed query holds the app's call with the agent, and the same frames below it as without", { skip }, async () => {
  const bare = await callSite([]);
  assert.ok(
    bare.some((line) => line.includes('app_query_site')),
    `bare: ${bare.join('\n')}`,
  );
  const withAgent = await callSite(['--require', registerPath]);
  assert.ok(withAgent.some(ours), 'the wrapper ran (its frames are there)');
  assert.deepEqual(
    withAgent.filter((line) => !ours(line)).map((line) => line.replace(/:\d+:\d+\)?$/, '')),
    bare.map((line) => line.replace(/:\d+:\d+\)?$/, '')),
  );
});
