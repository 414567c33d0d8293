/**
 * Worker threads behave as without pyro-run: messages arrive as posted, however they travel; a
 * worker started inside a request starts and prints as any other; workers have the globals the main
 * thread has (a test runner's leak check compares them); workers started with options of their own,
 * or by a process with V8 options, or by a worker, are profiled too, and so is a process a worker forks; what workers sampled last is sent when the
 * process ends; and PYRO_RUN_WORKERS=off leaves workers alone.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, NODE22, NODE26, registerPath, runCli, runNode, workerPreloadPath } from '../support/child.js';
import { readRecording } from '../support/read-recording.js';
import { OtlpSpanKind } from '../support/receiver.js';
import { scratchDirs } from '../support/scratch.js';

const { fresh } = scratchDirs('pyro-run-worker-transparency-');
const local = (out: string, extra: Record<string, string> = {}) => ({
  PYRO_RUN_OUTPUT_DIR: out,
  PYRO_RUN_QUIET: 'on',
  PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS: '2000',
  ...extra,
});

/** Runs a fixture bare and with the preload (local mode); both must end 0 with nothing on stderr. */
async function bareAndWithAgent(script: string, env: Record<string, string> = {}, nodeFlags: string[] = []) {
  const bare = runNode([...nodeFlags, fixture(script)], { env });
  const out = fresh();
  const agent = runNode([...nodeFlags, '--import', registerPath, fixture(script)], { env: { ...env, ...local(out) } });
  for (const app of [bare, agent]) {
    const exit = await app.exit();
    assert.equal(exit.code, 0, app.stderr);
    assert.equal(app.stderr, '');
  }
  return { bare: bare.stdout, agent: agent.stdout, out };
}

test('messages between threads arrive as posted, inside a request and out, by every way they travel; the work a request’s message asks for carries its span', async () => {
  const { bare, agent, out } = await bareAndWithAgent('workers/messages.mjs');
  assert.equal(agent, bare);
  assert.doesNotMatch(bare, /MISMATCH/);
  // Per round: 11 messages back from the worker, and 11 checked there as posted, 11 as read from the port, 1 broadcast.
  assert.equal(bare.match(/ ok$/gm)?.length, 2 * (11 + 11 + 11 + 1));
  assert.match(bare, /in a request: errors DataCloneError/);
  const run = readRecording(out);
  const [request] = run.spans.filter((span) => span.kind === OtlpSpanKind.Server);
  assert.ok(request, 'the request’s span');
  const burns = run.profiles
    .filter((p) => p.type === 'cpu')
    .flatMap((p) => p.samples)
    .filter((s) => s.stack.some((name) => name.startsWith('burn_')));
  const inRequest = burns.filter((s) => s.stack.includes('burn_in_a_request'));
  const atStartup = burns.filter((s) => s.stack.includes('burn_at_startup'));
  assert.ok(inRequest.length > 0 && atStartup.length > 0, 'both burns sampled');
  for (const sample of inRequest) assert.deepEqual([sample.labels.thread_name, sample.spanId], ['echo', request.spanId]);
  for (const sample of atStartup) assert.deepEqual([sample.labels.thread_name, sample.spanId], ['echo', undefined]);
});

test('a worker has the globals the main thread has: @hapi/lab’s leak check (main against a fresh worker) finds nothing', async () => {
  const { bare, agent } = await bareAndWithAgent('workers/globals.mjs');
  assert.equal(bare.trim(), '{"mainOnly":[],"workerOnly":[]}');
  assert.equal(agent, bare);
});

test('workers started with options of their own, or none, or an environment of their own, or by a worker, by a process with V8 options a worker refuses, run the agent and are profiled; so does a process a worker forks', async () => {
  const forkOut = fresh();
  const { bare, agent, out } = await bareAndWithAgent('workers/exec-argv.mjs', { FORK_OUTPUT_DIR: forkOut }, [
    '--max-old-space-size=300',
    '--expose-gc',
    '--stack-trace-limit=20',
  ]);
  const burners = ['inherited', 'given', 'empty', 'envless', 'nested'];
  for (const how of [...burners, 'nesting', 'forked']) {
    assert.match(bare, new RegExp(`^${how}: agent false$`, 'm'));
    assert.match(agent, new RegExp(`^${how}: agent true$`, 'm'));
  }
  // process.execArgv in each worker is what Node gives it without pyro-run: the main thread's (or
  // its starter's), or its own; the main thread's preload stands as a worker's, which a process
  // started with it runs as the main thread's.
  for (const output of [bare, agent]) {
    const execArgvOf = (who: string) => JSON.parse(new RegExp(`^${who}: execArgv (.*)$`, 'm').exec(output)![1]!) as string[];
    const main = execArgvOf('main').join('\n').replace(`--import\n${registerPath}`, `--require\n${workerPreloadPath}`).split('\n');
    for (const inheriting of ['inherited', 'envless', 'nesting', 'nested', 'forked']) assert.deepEqual(execArgvOf(inheriting), main, inheriting);
    assert.deepEqual(execArgvOf('given'), ['--no-warnings']);
    assert.deepEqual(execArgvOf('empty'), []);
  }
  const samples = readRecording(out)
    .profiles.filter((p) => p.type === 'cpu')
    .flatMap((p) => p.samples);
  for (const how of burners) {
    assert.ok(
      samples.some((s) => s.stack.includes(`burn_${how}`) && s.labels.thread_name === how),
      `${how}: its function under its name`,
    );
    // The whole thread's CPU: its collections are under their own frame.
    const cpu = samples.filter((s) => s.labels.thread_name === how).reduce((sum, s) => sum + (s.values.cpu ?? 0), 0);
    assert.ok(cpu >= 0.8 * 100e6, `${how}: ${cpu / 1e6} ms of its 100 ms in the profile`);
  }
  assert.ok(readRecording(forkOut).manifest, 'the forked process recorded a run of its own');
});

test('a worker that loads TypeScript through loader hooks it registers (tsx) loads it, as without pyro-run', async () => {
  const { bare, agent } = await bareAndWithAgent('workers/loader-hooks.mjs', {}, ['--import', 'tsx']);
  assert.equal(bare.trim(), 'twice 21 is 42');
  assert.equal(agent, bare);
});

test('PYRO_RUN_WORKERS=off: workers run no agent of their own, messages are left alone, and only the main thread is recorded', async () => {
  const { agent, out } = await bareAndWithAgent('workers/exec-argv.mjs', { PYRO_RUN_WORKERS: 'off' });
  // A worker started from a file runs the --import preload it inherits (not an eval'd one, nor one given options of its own): the preload does nothing there.
  for (const how of ['given', 'empty']) assert.match(agent, new RegExp(`^${how}: agent false$`, 'm'));
  const threads = new Set(readRecording(out).profiles.flatMap((p) => p.samples.map((s) => s.labels.thread_name)));
  assert.deepEqual([...threads], ['main']);
  const messages = await bareAndWithAgent('workers/messages.mjs', { PYRO_RUN_WORKERS: 'off' });
  assert.equal(messages.agent, messages.bare);
});

for (const end of ['exit', 'signal'] as const) {
  test(`what a working worker sampled last is sent when the process ends (${end === 'exit' ? 'process.exit()' : 'SIGTERM'})`, async () => {
    const out = fresh();
    const app = runNode(['--import', registerPath, fixture('workers/steady.mjs')], {
      env: { ...local(out, { PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS: '10000' }), END: end },
    });
    let worked: number;
    try {
      worked = Number((await app.line(/^worked (\d+)$/m))[1]);
    } catch (error) {
      // Its worker works until the process ends.
      app.process.kill('SIGKILL');
      throw error;
    }
    if (end === 'signal') app.process.kill('SIGTERM');
    const exit = await app.exit();
    assert.deepEqual(exit.code ?? exit.signal, end === 'exit' ? 0 : 'SIGTERM', app.stderr);
    assert.equal(app.stderr, '');
    const cpu = readRecording(out)
      .profiles.filter((p) => p.type === 'cpu')
      .flatMap((p) => p.samples)
      .filter((s) => s.labels.thread_name !== 'main')
      .reduce((sum, s) => sum + (s.values.cpu ?? 0), 0);
    // All of the worker's CPU: its collections, under their own frame, take a share of its steady work.
    assert.ok(cpu >= 0.8 * worked * 1000, `${cpu / 1e6} ms of the worker's ${worked / 1000} ms in the recording`);
  });
}

for (const [major, node] of [
  [22, NODE22],
  [26, NODE26],
] as const) {
  test(`Node ${major}: a worker's samples carry the span of the request that sent the work, through the CLI`, async () => {
    const out = fresh();
    const app = runCli([node, fixture('workers/messages.mjs')], { env: local(out) });
    const exit = await app.exit();
    assert.equal(exit.code, 0, app.stderr);
    assert.doesNotMatch(app.stdout, /MISMATCH/);
    const run = readRecording(out);
    const [request] = run.spans.filter((span) => span.kind === OtlpSpanKind.Server);
    const burns = run.profiles
      .filter((p) => p.type === 'cpu')
      .flatMap((p) => p.samples)
      .filter((s) => s.stack.includes('burn_in_a_request'));
    assert.ok(burns.length > 0);
    for (const sample of burns) assert.equal(sample.spanId, request?.spanId);
  });
}
