/**
 * The CLI as users meet it: real pyro-run processes running fixture apps. Exit codes, signal
 * deaths, relayed signals, verbatim argv and usage errors are what shells, CI and supervisors
 * rely on.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { SETTINGS } from '../../src/config/index.js';
import { ASYNC_CONTEXT_FRAME_FLAG } from '../../src/cli/argv.js';
import { LAUNCHED_APP_SLACK_MS } from '../../src/cli/main.js';
import { RELAYED_SIGNALS } from '../../src/cli/signals.js';
import { registerPath as REGISTER, runCli as runCliChild } from '../support/child.js';
import { cpuIngests } from '../support/linking.js';
import { startReceiver } from '../support/receiver.js';

const CLI = path.resolve(import.meta.dirname, '../../bin/pyro-run.js');
const FIXTURES = path.resolve(import.meta.dirname, '../../../test/fixtures/cli');
const fixture = (name: string) => path.join(FIXTURES, name);
const PACKAGE_VERSION = (JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../../package.json'), 'utf8')) as { version: string }).version;
const ON_NODE_22 = process.versions.node.startsWith('22.');
/** Generous: a slow CI machine starts two Node processes and the preload per test. */
const TEST_TIMEOUT_MS = 30_000;

/**
 * No backends: spans and profiles are switched off so tests only see the CLI. The test runner's
 * own marker is dropped so fixture apps run as plain programs, and the Node running the tests
 * comes first on PATH for commands that start `node`.
 */
function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _runner, NODE_OPTIONS: _options, ...env } = process.env;
  return {
    ...env,
    OTEL_TRACES_EXPORTER: 'none',
    PYRO_RUN_PROFILES: 'none',
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
    ...extra,
  };
}

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function start(args: readonly string[], extraEnv?: Record<string, string>): { child: ChildProcess; ended: Promise<Ended> } {
  const child = spawn(process.execPath, [CLI, ...args], { env: cliEnv(extraEnv), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const ended = new Promise<Ended>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, ended };
}

const runCli = (args: readonly string[], extraEnv?: Record<string, string>) => start(args, extraEnv).ended;

/** Resolves when `line` appears on the child's stdout; rejects if the child ends first. */
function lineOnStdout(child: ChildProcess, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: string) => {
      seen += chunk;
      if (seen.split('\n').includes(line)) {
        child.stdout?.off('data', onData);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.once('close', () => reject(new Error(`exited before printing ${JSON.stringify(line)}; stdout: ${seen}`)));
  });
}

interface Echo {
  argv: string[];
  execArgv: string[];
  nodeOptions: string | null;
  version: string;
}

function echoOf(result: Ended): Echo {
  assert.equal(result.code, 0, result.stderr);
  const line = result.stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(line) as Echo;
}

describe('pyro-run runs the app', { timeout: TEST_TIMEOUT_MS }, () => {
  it('a script: exit 0, arguments verbatim, preload required', async () => {
    const args = ['a b', '"double"', "'single'", '$(echo pwned)', '`id`', '*', '', '--server', 'x', '--', '-V'];
    const echo = echoOf(await runCli([fixture('echo-argv.mjs'), ...args]));
    assert.deepEqual(echo.argv, args);
    assert.equal(echo.version, process.versions.node, 'the Node that runs pyro-run runs the script');
    const requireAt = echo.execArgv.indexOf('--require');
    assert.equal(echo.execArgv[requireAt + 1], REGISTER);
    assert.equal(echo.execArgv.includes(ASYNC_CONTEXT_FRAME_FLAG), ON_NODE_22, 'AsyncContextFrame flag only on Node 22');
  });

  it('a CommonJS script', async () => {
    const echo = echoOf(await runCli([fixture('echo-argv.cjs'), 'x']));
    assert.deepEqual(echo.argv, ['x']);
    assert.ok(echo.execArgv.includes(REGISTER));
  });

  it('node with its own flags, after --', async () => {
    const echo = echoOf(await runCli(['--service-name', 'cli-test', '--', process.execPath, '--no-warnings', fixture('echo-argv.mjs'), 'y z']));
    assert.deepEqual(echo.argv, ['y z']);
    assert.deepEqual(echo.execArgv.slice(-3), ['--require', REGISTER, '--no-warnings']);
  });

  it('node --inspect after --: the debugger listens in the app, next to the preload', async () => {
    const result = await runCli(['--', process.execPath, '--inspect=127.0.0.1:0', fixture('inspector-url.mjs')]);
    const line = result.stdout.split('\n').find((l) => l.startsWith('{'));
    assert.ok(line, result.stdout + result.stderr);
    const seen = JSON.parse(line) as { inspectorUrl: string | null; execArgv: string[] };
    assert.match(seen.inspectorUrl ?? '', /^ws:\/\/127\.0\.0\.1:\d+\//, 'the inspector is listening');
    assert.ok(seen.execArgv.includes('--inspect=127.0.0.1:0'));
    assert.ok(seen.execArgv.includes(REGISTER));
  });

  it('any other command: nested node processes get the preload through NODE_OPTIONS', async () => {
    const echo = echoOf(await runCli(['sh', '-c', 'exec node "$0" "$@"', fixture('echo-argv.mjs'), 'a b', '$(x)']));
    assert.deepEqual(echo.argv, ['a b', '$(x)']);
    const nodeOptions = echo.nodeOptions?.split(' ') ?? [];
    assert.ok(nodeOptions.includes(`--require=${REGISTER}`), String(echo.nodeOptions));
    assert.equal(nodeOptions.includes(ASYNC_CONTEXT_FRAME_FLAG), ON_NODE_22, 'AsyncContextFrame flag only on Node 22');
  });

  it('flags reach the app as env vars', async () => {
    const result = await runCli(['--labels', 'team=cli', 'node', '-p', 'process.env.PYROSCOPE_LABELS']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim(), 'team=cli');
  });

  it('bad values in the environment (not flags) never stop the app', async () => {
    const echo = echoOf(await runCli([fixture('echo-argv.mjs')], { PYROSCOPE_FLUSH_INTERVAL_MS: 'soon', PYROSCOPE_LABELS: 'junk' }));
    assert.deepEqual(echo.argv, []);
  });
});

describe('pyro-run ends like the app', { timeout: TEST_TIMEOUT_MS }, () => {
  it('mirrors a non-zero exit code', async () => {
    const result = await runCli([fixture('exit-with.mjs'), '37']);
    assert.deepEqual([result.code, result.signal], [37, null]);
  });

  for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
    it(`dies of ${signal} when the app does`, async () => {
      const result = await runCli([fixture('kill-self.mjs'), signal]);
      assert.deepEqual([result.code, result.signal], [null, signal], result.stderr);
    });
  }

  for (const signal of RELAYED_SIGNALS) {
    it(`relays ${signal} to the app's own handler`, async () => {
      const { child, ended } = start([fixture('trap-signals.mjs')]);
      await lineOnStdout(child, 'ready');
      child.kill(signal);
      const result = await ended;
      assert.ok(result.stdout.split('\n').includes(`got ${signal}`), result.stdout);
      assert.deepEqual([result.code, result.signal], [42, null], result.stderr);
    });
  }
});

describe('under a launcher, pyro-run ends after the app, which may outlive the launcher', { timeout: TEST_TIMEOUT_MS }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pyro-run-cli-launcher-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  /** `npm start` there runs slow-stop.mjs through `sh -c`, which dies of SIGTERM at once: npm then exits, the app is still stopping. */
  const npmStart = ['npm', '--prefix', fixture('launcher'), 'start'];

  /**
   * The CLI's exit event, not 'close': the app holds the CLI's stdout and stderr pipes too, so
   * 'close' waits for the app whenever pyro-run exits.
   */
  const exitOf = (child: ChildProcess) => once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const killIfRunning = (pid: number) => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  };

  it('SIGTERM to `pyro-run npm start`: it exits once the app has stopped and flushed, as npm ended', async () => {
    const receiver = await startReceiver();
    try {
      // A slow backend: the final upload takes a while after the app's slow stop.
      receiver.setBehaviour('ingest', { delayMs: 300 });
      const marker = path.join(dir, 'stopped');
      const flags = ['--server', receiver.url, '--traces-exporter', 'none', '--flush-interval', '600000'];
      const app = runCliChild([...flags, ...npmStart], { env: { OTEL_SERVICE_NAME: 'launcher-app', STOP_MARKER: marker } });
      await app.line(/^ready \d+$/m);
      const exited = exitOf(app.process);
      app.process.kill('SIGTERM');
      const [code, signal] = await exited;
      assert.ok(existsSync(marker), 'the app finished its SIGTERM handler before pyro-run exited');
      const finalWork = cpuIngests(receiver)
        .flatMap((ingest) => ingest.samples)
        .filter((sample) => sample.stack.includes('finishWork'));
      assert.ok(finalWork.length > 0, 'the last window, sampled during the SIGTERM handler, was uploaded before pyro-run exited');
      // npm ends by re-raising the SIGTERM its `sh -c` died of; pyro-run mirrors npm.
      assert.deepEqual([code, signal], [null, 'SIGTERM'], app.stderr);
      await app.exit();
    } finally {
      await receiver.close();
    }
  });

  it('an app that ignores SIGTERM: pyro-run exits after the shutdown timeout plus slack, as npm ended', async () => {
    const shutdownTimeoutMs = 1000;
    /** npm's exit after the signal, on a loaded machine. */
    const testSlackMs = 5000;
    const app = runCliChild(['--shutdown-timeout', String(shutdownTimeoutMs), ...npmStart], {
      env: { OTEL_TRACES_EXPORTER: 'none', PYRO_RUN_PROFILES: 'none', STOP_MS: 'never' },
    });
    const appPid = Number((await app.line(/^ready (\d+)$/m))[1]);
    try {
      const exited = exitOf(app.process);
      const sent = Date.now();
      app.process.kill('SIGTERM');
      const [code, signal] = await exited;
      const took = Date.now() - sent;
      assert.deepEqual([code, signal], [null, 'SIGTERM'], app.stderr);
      assert.ok(took >= shutdownTimeoutMs + LAUNCHED_APP_SLACK_MS, `pyro-run waited for the app after npm ended: ${took} ms`);
      assert.ok(took < shutdownTimeoutMs + LAUNCHED_APP_SLACK_MS + testSlackMs, `took ${took} ms`);
      assert.doesNotThrow(() => process.kill(appPid, 0), 'the app still runs: pyro-run gave up on it');
    } finally {
      killIfRunning(appPid);
    }
    await app.exit();
  });
});

describe('pyro-run rejects bad input before starting anything', { timeout: TEST_TIMEOUT_MS }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pyro-run-cli-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const cases: { name: string; flags: string[]; flag: string }[] = [
    { name: 'non-numeric interval', flags: ['--flush-interval', 'abc'], flag: '--flush-interval' },
    { name: 'unknown flag', flags: ['--bogus', '1'], flag: '--bogus' },
    { name: 'invalid URL', flags: ['--server', 'pyroscope:4040'], flag: '--server' },
    { name: 'malformed labels', flags: ['--labels', 'region'], flag: '--labels' },
    { name: 'bad enum', flags: ['--span-scope', 'leaf'], flag: '--span-scope' },
  ];
  for (const [i, { name, flags, flag }] of cases.entries()) {
    it(`${name}: exit 2, names ${flag}, shows usage, app not run`, async () => {
      const marker = path.join(dir, `ran-${i}`);
      const result = await runCli([...flags, fixture('write-marker.mjs'), marker]);
      assert.equal(result.code, 2);
      assert.match(result.stderr, new RegExp(`^pyro-run: [^\\n]*${flag}`));
      assert.match(result.stderr, /\nUsage: pyro-run \[options\]/);
      assert.equal(result.stdout, '');
      assert.equal(existsSync(marker), false, 'the app must not have started');
    });
  }

  it('missing value: exit 2', async () => {
    const result = await runCli(['--server']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /^pyro-run: option --server: missing value/);
  });

  it('no command: exit 2', async () => {
    const result = await runCli([]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /^pyro-run: no command given\nUsage: /);
  });

  it('a script that does not exist: exit 2', async () => {
    const result = await runCli([path.join(dir, 'nope.js')]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /^pyro-run: script not found: .*nope\.js\nUsage: /);
  });

  it('a command that does not exist: exit 127', async () => {
    const result = await runCli(['pyro-run-no-such-command', 'arg']);
    assert.equal(result.code, 127);
    assert.equal(result.stderr, 'pyro-run: command not found: pyro-run-no-such-command\n');
  });
});

describe('--help and --version', { timeout: TEST_TIMEOUT_MS }, () => {
  it('--help lists every flag with its env var, exit 0', async () => {
    const result = await runCli(['--help']);
    assert.equal(result.code, 0);
    assert.equal(result.stderr, '');
    for (const setting of Object.values(SETTINGS)) {
      assert.ok(result.stdout.includes(`--${setting.flag} ${setting.arg}`), `--${setting.flag}`);
      assert.ok(result.stdout.includes(`(env: ${setting.env})`), setting.env);
    }
  });

  it('--version prints the package version', async () => {
    const result = await runCli(['--version']);
    assert.deepEqual([result.code, result.stdout], [0, `${PACKAGE_VERSION}\n`]);
  });
});
