/**
 * When the pyro-run CLI itself is killed with SIGKILL (`timeout -k`, a CI runner cancelling a
 * job), its app does not serve on, orphaned, holding its port: it stops as on SIGTERM, flushing
 * what it owes (issue 16). Directly, and behind a launcher that stays in between; not with
 * `--orphaned-app keep`; never for daemons (the PM2 test in frameworks.test.ts: `pyro-run pm2
 * start` returns at once and PM2's apps serve on).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test, type TestContext } from 'node:test';
import { spawn } from 'node:child_process';
import { formatLifeline, LIFELINE_ENV, LIFELINE_FD, ownSession, parseLifeline, sessionOfStat } from '../../src/agent/lifeline.js';
import { statFields } from '../../src/util/proc-stat.js';
import { Child, childEnv, descendants, fixture, runCli } from '../support/child.js';
import { linkedEnv, serverSpans } from '../support/linking.js';
import { load } from '../support/load.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

test('the lifeline variable is <fd>:<session>, with an fd past stdio; anything else is no lifeline', () => {
  const cases: [string | undefined, ReturnType<typeof parseLifeline>][] = [
    ['4:123', { fd: 4, session: 123 }],
    ['3:1', { fd: 3, session: 1 }],
    ['2:123', undefined],
    ['4:0', { fd: 4, session: 0 }],
    ['4', undefined],
    [' 4:123', undefined],
    ['4:12x', undefined],
    ['', undefined],
    [undefined, undefined],
  ];
  for (const [value, expected] of cases) assert.deepEqual(parseLifeline(value), expected, String(value));
});

test('the session id is read after the command name, whatever it holds', () => {
  assert.equal(sessionOfStat('4242 (node) S 1 4242 4200 34816 4242 4194560'), 4200);
  assert.equal(sessionOfStat('4242 (we) ird) (x) S 1 4242 4201 0 -1 4194560'), 4201);
  // A container whose PID namespace does not hold the session leader: 0, and still a session.
  assert.equal(sessionOfStat('2 (node) S 1 0 0 0 -1 4194304'), 0);
  assert.equal(sessionOfStat('garbage'), undefined);
});

/** The probe given a lifeline as the CLI gives it, in this process's session or (`detached`: setsid) in its own. */
function probe(detached: boolean): Child {
  const env = childEnv({ [LIFELINE_ENV]: formatLifeline({ fd: LIFELINE_FD, session: ownSession()! }) });
  return new Child(spawn(process.execPath, [fixture('apps/lifeline-probe.mjs')], { env, detached, stdio: ['ignore', 'pipe', 'pipe', 'ignore', 'pipe'] }));
}

test("a process in the CLI's session watches the lifeline and learns when the CLI's end closes", async (t) => {
  const child = probe(false);
  t.after(() => child.process.kill('SIGKILL'));
  await child.line(/^watching$/m);
  child.process.stdio[LIFELINE_FD]?.destroy();
  await child.line(/^cli gone$/m);
});

test('a daemon (a session of its own) does not watch: it was meant to outlive the command that started it', async () => {
  const child = probe(true);
  await child.line(/^not watching$/m);
  assert.equal((await child.exit()).code, 0);
});

/** Nothing is sent before the end: whatever arrives is the flush at the stop. */
const ONLY_AT_EXIT = { PYROSCOPE_FLUSH_INTERVAL_MS: '600000', OTEL_BSP_SCHEDULE_DELAY: '600000' };
const REQUESTS = 12;

/** Running, not ended: an orphan that has exited may stay a zombie until init reaps it. */
function isAlive(pid: number): boolean {
  try {
    return !/^[ZX]$/.test(statFields(readFileSync(`/proc/${pid}/stat`, 'utf8'))[0] ?? '');
  } catch {
    return false;
  }
}

/** The CLI running `command` with the receiver as backend, serving REQUESTS requests; then the app's pids. */
async function serving(receiver: Receiver, args: string[]): Promise<{ cli: Child; base: string; appPids: number[] }> {
  const cli = runCli(args, { env: { ...linkedEnv(receiver), ...ONLY_AT_EXIT } });
  const port = (await cli.line(/listening (\d+)/))[1];
  const base = `http://127.0.0.1:${port}`;
  await load(base, (i) => `/work/${i}`, REQUESTS, 2);
  assert.equal(receiver.requests.length, 0, 'nothing sent yet');
  return { cli, base, appPids: descendants(cli.process.pid!) };
}

/** Whatever the outcome, nothing the test started outlives it (an orphan would hold the runner's pipes open). */
function killLeftovers(t: TestContext, pids: number[]): void {
  t.after(() => {
    for (const pid of pids.filter(isAlive)) process.kill(pid, 'SIGKILL');
  });
}

/**
 * The pids still running once they had the time to finish exiting. A process closes its files
 * (the pipes the test saw close) before the kernel marks it a zombie, and a process that is not
 * our child signals its end no other way Node can wait on: re-read for up to 2 s.
 */
async function stillAlive(pids: number[]): Promise<number[]> {
  const until = Date.now() + 2_000;
  let alive = pids.filter(isAlive);
  while (alive.length > 0 && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    alive = alive.filter(isAlive);
  }
  return alive;
}

async function assertStoppedAndFlushed(cli: Child, base: string, appPids: number[], receiver: Receiver): Promise<void> {
  cli.process.kill('SIGKILL');
  // The app holds the stdout and stderr it inherited from the CLI: they close when it has ended.
  const exit = await cli.exit(15_000);
  assert.equal(exit.signal, 'SIGKILL');
  assert.deepEqual(await stillAlive(appPids), [], 'no process of the app is left');
  await assert.rejects(fetch(`${base}/work/late`), 'its port is free');
  assert.equal(serverSpans(receiver).length, REQUESTS, "every request's span was flushed");
  assert.ok(
    receiver.ingests.some((ingest) => ingest.metricName === 'process_cpu'),
    'the last profile window was flushed',
  );
  const warnings = cli.stderr.split('\n').filter((line) => line.includes('warning'));
  assert.deepEqual(warnings, [
    'pyro-run: warning: the pyro-run CLI that started this app is gone (killed): the app stops as on SIGTERM; --orphaned-app keep lets it run on',
  ]);
}

test('when the CLI is killed with SIGKILL, its app stops as on SIGTERM: it flushes, exits and frees its port', async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const { cli, base, appPids } = await serving(receiver, [fixture('apps/server.cjs')]);
  killLeftovers(t, appPids);
  assert.equal(appPids.length, 1);
  await assertStoppedAndFlushed(cli, base, appPids, receiver);
});

test('behind a launcher that stays in between (sh), the app stops too when the CLI is killed', async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  // `; true` keeps sh there as the app's parent instead of exec'ing node.
  const { cli, base, appPids } = await serving(receiver, ['sh', '-c', `node ${fixture('apps/server.cjs')}; true`]);
  killLeftovers(t, appPids);
  assert.equal(appPids.length, 2, 'sh and the app');
  await assertStoppedAndFlushed(cli, base, appPids, receiver);
});

test('with --orphaned-app keep, the app runs on when the CLI is killed', async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const { cli, base, appPids } = await serving(receiver, ['--orphaned-app', 'keep', fixture('apps/server.cjs')]);
  killLeftovers(t, appPids);
  cli.process.kill('SIGKILL');
  await new Promise((resolve) => cli.process.once('exit', resolve));
  const response = await fetch(`${base}/work/after`);
  assert.equal(response.status, 200, 'it still serves');
  await response.arrayBuffer();
  assert.deepEqual(appPids.filter(isAlive), appPids);
  assert.doesNotMatch(cli.stderr, /warning/);
});
