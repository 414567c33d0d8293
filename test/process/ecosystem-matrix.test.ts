/**
 * Cells of the support matrix, each through real processes: an unsupported Node (20) runs the app
 * untouched, `pyro-run npx tsx app.ts` instruments the app and not its launchers, and the Docker
 * example's ENTRYPOINT works as PID 1 of a PID namespace, as in a container.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { signalExitCode } from '../../src/cli/signals.js';
import { Child, childEnv, cliPath, fixture, NODE20, registerPath, repoRoot, runCli, runNode } from '../support/child.js';
import { load } from '../support/load.js';
import { pid1Of, pidNamespaceUnavailable, UNSHARE_ARGS } from '../support/pid-namespace.js';
import { readRecording } from '../support/read-recording.js';
import { scratchDirs } from '../support/scratch.js';

const { fresh } = scratchDirs('pyro-run-matrix-');
const OTEL_AND_EXIT = fixture('ecosystem/otel-and-exit.mjs');
const APP_EXIT_CODE = 7;

describe('unsupported Node (20): one warning, the app runs uninstrumented, its exit code unchanged', () => {
  const launches: { name: string; start: (out: string) => Child }[] = [
    {
      name: '`node20 --import pyro-run/register app.mjs`',
      start: (out) => runNode(['--import', registerPath, OTEL_AND_EXIT, String(APP_EXIT_CODE)], { node: NODE20, env: { PYRO_RUN_OUTPUT_DIR: out } }),
    },
    { name: '`pyro-run node20 app.mjs` (the CLI on Node 24)', start: (out) => runCli(['--out', out, NODE20, OTEL_AND_EXIT, String(APP_EXIT_CODE)]) },
    {
      name: '`pyro-run app.mjs` with the CLI itself on Node 20',
      start: (out) => runCli(['--out', out, OTEL_AND_EXIT, String(APP_EXIT_CODE)], { node: NODE20 }),
    },
  ];
  for (const launch of launches) {
    test(launch.name, async () => {
      const out = fresh();
      const app = launch.start(out);
      const exit = await app.exit();
      assert.equal(exit.code, APP_EXIT_CODE, app.stderr);
      assert.match(app.stdout, /^app ran on v20\.\d+\.\d+ otel=false\n$/);
      assert.match(app.stderr, /^pyro-run: warning: Node\.js 20\.\d+\.\d+ is not supported \(needs 22\.15\+\); the app runs without tracing or profiling\n$/);
      assert.deepEqual(readdirSync(out), [], 'nothing recorded');
    });
  }

  test('control: the same app and flags on Node 24 are instrumented', async () => {
    const out = fresh();
    const app = runCli(['--out', out, '--quiet', OTEL_AND_EXIT, String(APP_EXIT_CODE)]);
    const exit = await app.exit();
    assert.equal(exit.code, APP_EXIT_CODE, app.stderr);
    assert.match(app.stdout, /^app ran on v24\.\d+\.\d+ otel=true\n$/);
    assert.equal(readRecording(out).manifest.complete, true);
  });
});

test('`pyro-run npx tsx app.mts`: the app is traced and profiled, npx and the tsx CLI are not', async () => {
  const out = fresh();
  const requests = 30;
  // From the fixtures folder npx finds the repository's tsx, as it finds a project's own.
  const app = runCli(['--out', out, '--quiet', '--sampling-interval', '2000', 'npx', 'tsx', 'tsx-app.mts'], {
    cwd: fixture('ecosystem'),
    env: { OTEL_SERVICE_NAME: 'tsx-app' },
  });
  const [, port, appPid] = await app.line(/listening (\d+) pid (\d+)/, 60_000);
  await load(`http://127.0.0.1:${port}`, (i) => `/n/${i}`, requests, 2);
  app.process.kill('SIGTERM');
  await app.exit();

  // One recording among the three Node processes (npx, tsx's CLI, the app): the app's.
  const run = readRecording(out);
  assert.equal(run.manifest.pid, Number(appPid));
  assert.equal(run.manifest.service, 'tsx-app');
  assert.equal(run.manifest.complete, true);
  const servers = run.spans.filter((span) => span.kind === 2);
  assert.equal(servers.length, requests);
  for (const span of servers) assert.equal(span.attributes['pyroscope.profile.id'], span.spanId);
  const serverIds = new Set(servers.map((span) => span.spanId));
  const hot = run.profiles
    .filter((p) => p.type === 'cpu')
    .flatMap((p) => p.samples)
    .filter((s) => s.stack.includes('crunchTypeScript'));
  assert.ok(hot.length > 0, 'crunchTypeScript was sampled');
  for (const sample of hot)
    assert.ok(serverIds.has(sample.labels.span_id ?? ''), `a crunchTypeScript sample carries the span_id of a request: ${JSON.stringify(sample.labels)}`);
});

describe('the Docker example’s ENTRYPOINT as PID 1 of a PID namespace', () => {
  const unavailable = pidNamespaceUnavailable();
  const entrypoint = dockerEntrypoint();

  /** `pyro-run <args>` as PID 1 of a new PID namespace, recording into `out`. */
  function cliAsPid1(args: string[], cwd: string, out: string, env: Record<string, string> = {}): Child {
    // The bin's `#!/usr/bin/env node` line execs Node on the CLI; so does this, without the install.
    const command = [process.execPath, cliPath, ...args];
    const fullEnv = childEnv({ PYRO_RUN_OUTPUT_DIR: out, PYRO_RUN_QUIET: 'on', ...env });
    return new Child(spawn('unshare', [...UNSHARE_ARGS, ...command], { cwd, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] }));
  }

  /** The ENTRYPOINT, plus CMD-style arguments, in a folder laid out like the image's /app with `app` as its server.mjs. */
  function startAsPid1(app: string, args: string[], out: string): Child {
    const dir = fresh();
    copyFileSync(app, path.join(dir, 'server.mjs'));
    return cliAsPid1([...entrypoint.slice(1), ...args], dir, out, { OTEL_SERVICE_NAME: 'shop-example' });
  }

  test('runs pyro-run on the app', () => {
    assert.deepEqual(entrypoint, ['node_modules/.bin/pyro-run', 'node', 'server.mjs']);
  });

  test('SIGTERM sent to pyro-run as PID 1 reaches the app; its exit code passes through; the run is flushed', { skip: unavailable }, async () => {
    const out = fresh();
    const container = startAsPid1(fixture('cli/trap-signals.mjs'), [], out);
    await container.line(/^ready$/m);
    process.kill(pid1Of(container.process.pid!), 'SIGTERM');
    const exit = await container.exit();
    assert.match(container.stdout, /^got SIGTERM$/m, 'the app’s own handler ran');
    assert.equal(exit.code, 42, container.stderr);
    assert.equal(readRecording(out).manifest.complete, true);
  });

  test('an app that exits 3 by itself: pyro-run as PID 1 exits 3', { skip: unavailable }, async () => {
    const container = startAsPid1(fixture('cli/exit-with.mjs'), ['3'], fresh());
    const exit = await container.exit();
    assert.equal(exit.code, 3, container.stderr);
    assert.equal(container.stderr, '', 'no warning: the installed binary is PID 1');
  });

  test('`npx pyro-run node app` as PID 1 (npx as the ENTRYPOINT): a warning at start says SIGTERM will not reach the app and what to write instead', {
    skip: unavailable,
  }, async () => {
    const dir = fresh();
    mkdirSync(path.join(dir, 'node_modules/.bin'), { recursive: true });
    // pyro-run installed in the image, its bin linked as npm links it.
    writeFileSync(path.join(dir, 'node_modules/.bin/pyro-run'), `#!/bin/sh\nexec "${process.execPath}" "${cliPath}" "$@"\n`, { mode: 0o755 });
    writeFileSync(path.join(dir, 'package.json'), '{"name":"app","version":"1.0.0"}');
    const env = childEnv({ PYRO_RUN_OUTPUT_DIR: fresh(), PYRO_RUN_QUIET: 'on' });
    const container = new Child(
      spawn('unshare', [...UNSHARE_ARGS, 'npx', 'pyro-run', 'node', fixture('cli/exit-with.mjs'), '0'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    const exit = await container.exit();
    assert.equal(exit.code, 0, container.stderr);
    assert.match(
      container.stderr,
      /^pyro-run: warning: npx \(npm exec\) is PID 1 here, .*\(ENTRYPOINT \["node_modules\/\.bin\/pyro-run", "node", "server\.js"\]\)/m,
    );
  });

  test('`pyro-run npm start` as PID 1: the app, still stopping when npm has exited, finishes and flushes', { skip: unavailable }, async () => {
    const out = fresh();
    const marker = path.join(fresh(), 'stopped');
    // Longer than the 1 s that pyro-run, as PID 1, lingered after npm's exit before the fix anyway:
    // the self-kill of mirrorExit is ignored by a PID 1, so it falls back to exit(143) a second later.
    const stopMs = 2500;
    const container = cliAsPid1(['npm', 'start'], fixture('cli/launcher'), out, {
      OTEL_SERVICE_NAME: 'launcher-app',
      STOP_MARKER: marker,
      STOP_MS: String(stopMs),
    });
    await container.line(/^ready \d+$/m);
    process.kill(pid1Of(container.process.pid!), 'SIGTERM');
    const exit = await container.exit();
    // PID 1's exit kills the rest of the namespace: what the app did, it did before.
    assert.ok(existsSync(marker), 'the app finished its SIGTERM handler');
    const run = readRecording(out);
    assert.equal(run.manifest.complete, true);
    assert.ok(
      run.profiles.flatMap((p) => p.samples).some((s) => s.stack.includes('finishWork')),
      'the last window, from the SIGTERM handler, was recorded',
    );
    // npm died of the SIGTERM it re-raised; PID 1 cannot die of its own signal, so pyro-run exits 128 + 15.
    assert.equal(exit.code, signalExitCode('SIGTERM'), container.stderr);
  });
});

/** examples/docker/Dockerfile's exec-form ENTRYPOINT. */
function dockerEntrypoint(): string[] {
  const dockerfile = readFileSync(path.join(repoRoot, 'examples/docker/Dockerfile'), 'utf8');
  const json = dockerfile.match(/^ENTRYPOINT (\[.*\])$/m)?.[1];
  assert.ok(json, 'the Dockerfile has an exec-form ENTRYPOINT');
  return JSON.parse(json) as string[];
}
