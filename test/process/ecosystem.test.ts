/** Where users run Node beyond a plain script: started from code, with worker threads, forking children, cluster. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { readRecording } from '../support/read-recording.js';
import path from 'node:path';
import { test } from 'node:test';
import { fixture, registerPath, runCli, runNode } from '../support/child.js';
import { assertLinked } from '../support/linking.js';
import { assertOneAgentPerProcess } from '../support/per-process.js';
import { startReceiver } from '../support/receiver.js';
import { scratchDirs } from '../support/scratch.js';

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

test('worker threads: the worker runs an agent of its own, whose samples the main thread records in its one recording', async () => {
  const out = fresh();
  const app = runNode(['--import', registerPath, fixture('ecosystem/worker.mjs')], { env: { PYRO_RUN_OUTPUT_DIR: out, PYRO_RUN_QUIET: 'on' } });
  const exit = await app.exit();
  assert.equal(exit.code, 0, app.stderr);
  assert.match(app.stdout, /worker \{"done":true,"agentInWorker":true\}/);
  assert.match(app.stdout, /worker exit 0/);
  assert.equal(app.stderr, '');
  const run = readRecording(out);
  const threads = new Set(run.profiles.flatMap((profile) => profile.samples.map((sample) => sample.labels.thread_name)));
  assert.deepEqual([...threads].sort(), ['main', 'worker 1']);
});

/** Fixtures that start more Node processes; each process prints a line with its pid, the first one last, once the others exited 0. */
const families = [
  { name: 'child_process.fork', fixture: 'ecosystem/fork-parent.cjs', processes: 2, done: /parent pid \d+ saw child exit 0/ },
  { name: 'cluster', fixture: 'ecosystem/cluster.cjs', processes: 3, done: /primary pid \d+ saw workers exit 0,0, listening \[\]/ },
];

for (const family of families) {
  test(`${family.name}: each Node process is instrumented once, with its own instance id`, async () => {
    const receiver = await startReceiver();
    try {
      const app = runCli(['--server', receiver.url, '--otlp-endpoint', receiver.url, fixture(family.fixture)], { env: { RECEIVER: receiver.url } });
      const exit = await app.exit();
      assert.equal(exit.code, 0, app.stderr);
      assert.match(app.stdout, family.done, `${app.stdout}${app.stderr}`);
      assert.doesNotMatch(app.stdout, /started=false/);
      const pids = [...app.stdout.matchAll(/\bpid (\d+)/g)].map((m) => Number(m[1]));
      assert.equal(pids.length, family.processes, app.stdout);
      await assertOneAgentPerProcess(receiver, pids);
      assert.equal(app.stderr.match(/warning/g), null, app.stderr);
    } finally {
      await receiver.close();
    }
  });
}

test('a module set twice (NODE_OPTIONS and --import) starts once', async () => {
  const out = fresh();
  const app = runNode(['--import', registerPath, fixture('ecosystem/fork-child.cjs')], {
    env: { NODE_OPTIONS: `--import=${registerPath}`, PYRO_RUN_OUTPUT_DIR: out, PYRO_RUN_QUIET: 'on' },
  });
  const exit = await app.exit();
  assert.equal(exit.code, 0, app.stderr);
  assert.equal(readdirSync(out).length, 1, 'one agent, one recording');
  const manifest = JSON.parse(readFileSync(path.join(out, readdirSync(out)[0]!, 'run.json'), 'utf8')) as { complete: boolean };
  assert.equal(manifest.complete, true);
});
