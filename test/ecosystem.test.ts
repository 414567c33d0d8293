/** Where users run Node beyond a plain script: started from code, with worker threads, forking children. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fixture, registerPath, runCli, runNode } from './support/child.js';
import { assertLinked } from './support/linking.js';
import { startReceiver } from './support/receiver.js';
import { scratchDirs } from './support/scratch.js';

const { fresh } = scratchDirs('pyro-run-ecosystem-');

test('programmatic API: start() from code, shutdown() flushes', async () => {
  const receiver = await startReceiver();
  try {
    const app = runNode([fixture('ecosystem/programmatic.mjs')], { env: { RECEIVER: receiver.url } });
    const port = (await app.line(/listening (\d+)/))[1];
    for (let i = 0; i < 5; i++) assert.equal((await fetch(`http://127.0.0.1:${port}/hello/n${i}`)).status, 200);
    app.process.kill('SIGTERM');
    await app.line(/shut down/);
    const exit = await app.exit();
    assert.equal(exit.code, 0, app.stderr);
    assertLinked(receiver, 'api-started');
    assert.equal(receiver.spans.filter((s) => s.name === 'GET /hello/:name').length, 5);
  } finally {
    await receiver.close();
  }
});

test('worker threads: the main thread is profiled, the worker runs without an agent of its own', async () => {
  const out = fresh();
  const app = runNode(['--import', registerPath, fixture('ecosystem/worker.mjs')], { env: { PYRO_RUN_OUTPUT_DIR: out, PYRO_RUN_QUIET: 'on' } });
  const exit = await app.exit();
  assert.equal(exit.code, 0, app.stderr);
  assert.match(app.stdout, /worker \{"done":true,"agentInWorker":false\}/);
  assert.match(app.stdout, /worker exit 0/);
  assert.equal(app.stderr, '');
  const runs = readdirSync(out);
  assert.equal(runs.length, 1, 'one recording: the main thread’s');
});

test('child_process.fork: each Node process is instrumented once, with its own instance id', async () => {
  const receiver = await startReceiver();
  try {
    const app = runCli(['--server', receiver.url, '--otlp-endpoint', receiver.url, fixture('ecosystem/fork-parent.cjs')], { env: { RECEIVER: receiver.url } });
    const exit = await app.exit();
    assert.equal(exit.code, 0, app.stderr);
    const childPid = Number(app.stdout.match(/child pid (\d+) started=true/)?.[1]);
    const parentPid = Number(app.stdout.match(/parent pid (\d+) saw child exit 0/)?.[1]);
    assert.ok(childPid && parentPid && childPid !== parentPid, app.stdout);
    // Both processes uploaded profiles (a CPU and a wall one each) and spans, each under its own instance id.
    await receiver.waitFor(() => receiver.ingests.length >= 4, { timeoutMs: 10_000 });
    const pings = receiver.spans.filter((s) => s.name === 'GET');
    assert.deepEqual(new Set(pings.map((s) => s.resource['process.pid'])), new Set([parentPid, childPid]));
    const instances = new Set(pings.map((s) => s.resource['service.instance.id']));
    assert.equal(instances.size, 2, `two instance ids: ${[...instances].join(', ')}`);
    assert.equal(app.stderr.match(/warning/g), null, app.stderr);
  } finally {
    await receiver.close();
  }
});

test('a module set twice (NODE_OPTIONS and --import) starts once', async () => {
  const out = fresh();
  const app = runNode(['--import', registerPath, fixture('ecosystem/fork-child.cjs')], { env: { NODE_OPTIONS: `--import=${registerPath}`, PYRO_RUN_OUTPUT_DIR: out, PYRO_RUN_QUIET: 'on' } });
  const exit = await app.exit();
  assert.equal(exit.code, 0, app.stderr);
  assert.equal(readdirSync(out).length, 1, 'one agent, one recording');
  const manifest = JSON.parse(readFileSync(path.join(out, readdirSync(out)[0]!, 'run.json'), 'utf8')) as { complete: boolean };
  assert.equal(manifest.complete, true);
});
