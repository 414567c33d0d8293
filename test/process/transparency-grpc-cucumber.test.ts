/**
 * Invisible to the app, for gRPC and cucumber (the pattern of transparency.test.ts): the real
 * @grpc/grpc-js and @cucumber/cucumber from node_modules, run in a process of their own bare and with
 * the preload; what the app relies on is asserted on the bare run, and the run with the agent must
 * see the same. Found by running grpc-js's and cucumber's own suites with the agent; the fixes are
 * in build/instrumentation-patches.ts (docs/compatibility.md lists them).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fixture, registerPath, repoRoot, runNode } from '../support/child.js';
import { readRecording } from '../support/read-recording.js';
import { scratchDirs } from '../support/scratch.js';

const { fresh } = scratchDirs('pyro-run-transparency-grpc-cucumber-');
const GRPC_APP = fixture('apps/grpc-expectations.cjs');

/** The agent's warnings on stderr (local mode's notices and summary left out). */
const warningsOnly = (stderr: string) => stderr.split('\n').filter((line) => line.includes('warning'));

/**
 * What the gRPC fixture printed for `name`, bare and with the agent (not quiet, recording locally
 * into `recorded`), and the agent's warnings; bare, stderr must be empty.
 */
async function observeGrpc(name: string): Promise<{ bare: unknown; agent: unknown; warnings: string[]; recorded: string }> {
  const run = async (args: string[], env: Record<string, string>) => {
    const child = runNode([...args, GRPC_APP, name], { env });
    const exit = await child.exit();
    assert.equal(exit.code, 0, `${name}${args.length ? ' with the agent' : ''}: ${child.stdout}${child.stderr}`);
    return { printed: JSON.parse(child.stdout) as unknown, stderr: child.stderr };
  };
  const bare = await run([], {});
  assert.equal(bare.stderr, '');
  const recorded = fresh();
  const agent = await run(['--import', registerPath], { PYRO_RUN_OUTPUT_DIR: recorded, PYRO_RUN_QUIET: 'off' });
  return { bare: bare.printed, agent: agent.printed, warnings: warningsOnly(agent.stderr), recorded };
}

test("grpc: the trailing metadata a unary handler passes to its callback reaches the client's 'status' event", async () => {
  const { bare, agent, warnings } = await observeGrpc('unary handler trailing metadata');
  assert.deepEqual(bare, { reply: { value: { hello: 'a' } }, status: { code: 0, metadata: { 'x-trailer': 'kept' } } });
  assert.deepEqual(agent, bare);
  assert.deepEqual(warnings, []);
});

test("grpc: a handler added with server.register() runs with grpc-js's handler record as `this`, unary and streaming", async () => {
  const { bare, agent, warnings } = await observeGrpc('register handler this');
  const record = ['deserialize', 'func', 'path', 'serialize', 'type'];
  assert.deepEqual(bare, {
    seen: [
      ['unary', record, 'unary', '/fixture.Direct/Unary'],
      ['serverStream', record, 'serverStream', '/fixture.Direct/Stream'],
    ],
    unary: { ok: true },
    parts: [{ part: 1 }],
  });
  assert.deepEqual(agent, bare);
  assert.deepEqual(warnings, []);
});

test('grpc: a service with an rpc named GetChannel (as Channelz has) answers by either name, and its calls are traced with their address', async () => {
  const { bare, agent, warnings, recorded } = await observeGrpc('rpc named GetChannel');
  assert.deepEqual(bare, { byProtoName: { value: { target: 'channel 7' } }, byOriginalName: { value: { target: 'channel 8' } }, codes: [0, 0] });
  assert.deepEqual(agent, bare);
  assert.deepEqual(warnings, []);
  // Before the fix each call recursed through `client.getChannel` until the stack overflowed, and
  // the wrap guard ran it without the instrumentation: the app got its reply, but no client span.
  const clients = readRecording(recorded).spans.filter((span) => span.kind === 3 && span.name === 'grpc.fixture.Channelz/GetChannel');
  assert.deepEqual(
    clients.map((span) => [span.attributes['server.address'], typeof span.attributes['server.port']]),
    [
      ['127.0.0.1', 'number'],
      ['127.0.0.1', 'number'],
    ],
  );
});

const CUCUMBER_DIR = fixture('cucumber');
const CUCUMBER_BIN = path.join(repoRoot, 'node_modules/@cucumber/cucumber/bin/cucumber.js');

interface CucumberRun {
  code: number | null;
  /** The summary formatter's output, the run's time folded. */
  summary: string;
  stderr: string;
  /** The message formatter's envelopes, ids numbered in order of appearance and times folded. */
  messages: Record<string, unknown>[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Envelopes comparable across runs: a random id becomes its order of appearance, a time or duration `<time>`. */
function comparable(ndjson: string): Record<string, unknown>[] {
  const ids = new Map<string, string>();
  const walk = (value: unknown, key?: string): unknown => {
    if (key === 'timestamp' || key === 'duration') return '<time>';
    if (typeof value === 'string' && UUID.test(value)) {
      if (!ids.has(value)) ids.set(value, `id ${ids.size}`);
      return ids.get(value);
    }
    if (Array.isArray(value)) return value.map((item) => walk(item));
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, walk(item, name)]));
    return value;
  };
  return ndjson
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => walk(JSON.parse(line)) as Record<string, unknown>);
}

/** cucumber's CLI on the fixture's features, as a project runs it from its folder. */
async function runCucumber(agent: boolean): Promise<CucumberRun> {
  const messagesFile = path.join(fresh(), 'messages.ndjson');
  const cli = [CUCUMBER_BIN, '--require', 'steps.cjs', '--format', 'summary', '--format', `message:${messagesFile}`, 'features'];
  const child = runNode(agent ? ['--import', registerPath, ...cli] : cli, {
    cwd: CUCUMBER_DIR,
    env: agent ? { PYRO_RUN_OUTPUT_DIR: fresh(), PYRO_RUN_QUIET: 'on' } : {},
  });
  const exit = await child.exit();
  return {
    code: exit.code,
    summary: child.stdout.replace(/\d+m\d+\.\d+s/g, '<time>'),
    stderr: child.stderr,
    messages: comparable(readFileSync(messagesFile, 'utf8')),
  };
}

let cucumberRuns: Promise<{ bare: CucumberRun; agent: CucumberRun }> | undefined;
/** The fixture's run bare and with the agent, once for the tests below. */
const cucumber = () => (cucumberRuns ??= (async () => ({ bare: await runCucumber(false), agent: await runCucumber(true) }))());

/** The envelopes of one kind, e.g. 'testStepFinished'. */
// biome-ignore lint/suspicious/noExplicitAny: cucumber's message envelopes, read field by field as the assertions need.
const envelopes = (run: CucumberRun, kind: string) => run.messages.filter((message) => kind in message).map((message) => message[kind] as Record<string, any>);

/** Each scenario's steps' statuses (hooks included), in the order they ran. */
function statuses(run: CucumberRun): Record<string, string[]> {
  const pickles = new Map(envelopes(run, 'pickle').map((pickle) => [pickle.id, pickle.name as string]));
  const testCases = new Map(envelopes(run, 'testCase').map((testCase) => [testCase.id, pickles.get(testCase.pickleId)!]));
  const started = new Map(envelopes(run, 'testCaseStarted').map((start) => [start.id, testCases.get(start.testCaseId)!]));
  const byScenario: Record<string, string[]> = {};
  for (const finished of envelopes(run, 'testStepFinished')) (byScenario[started.get(finished.testCaseStartedId)!] ??= []).push(finished.testStepResult.status);
  return byScenario;
}

test('cucumber: a scenario under a Rule runs, and the run reports every scenario as bare', async () => {
  const { bare, agent } = await cucumber();
  assert.equal(bare.code, 1, bare.stderr);
  assert.deepEqual(statuses(bare)['a scenario under a rule'], ['PASSED', 'PASSED']);
  assert.equal(agent.code, bare.code, agent.stderr);
  assert.deepEqual(statuses(agent), statuses(bare));
  assert.equal(agent.summary, bare.summary);
  assert.equal(agent.stderr, bare.stderr);
});

test("cucumber: a step and a hook that take a callback are called with cucumber's callback; a hook of too many arguments is refused by cucumber", async () => {
  const { bare, agent } = await cucumber();
  const seen = statuses(bare);
  assert.deepEqual(seen['a step and a hook that call back'], ['PASSED', 'PASSED', 'PASSED']);
  assert.deepEqual(seen['a hook of too many arguments'], ['PASSED', 'FAILED', 'SKIPPED']);
  const refused = envelopes(bare, 'testStepFinished').find(
    (finished) => finished.testStepResult.status === 'FAILED' && /arguments/.test(finished.testStepResult.message),
  );
  assert.match(
    refused?.testStepResult.message,
    /^Error: function has 3 arguments, should have 0 or 1 \(if synchronous or returning a promise\) or 2 \(if accepting a callback\)/,
  );
  assert.deepEqual(statuses(agent), seen);
  assert.deepEqual(envelopes(agent, 'testStepFinished'), envelopes(bare, 'testStepFinished'));
});

test("cucumber: step and hook definitions are located at their line in the app's steps file, in the messages and the reports", async () => {
  const { bare, agent } = await cucumber();
  const located = (run: CucumberRun) => [
    ...envelopes(run, 'hook').map((hook) => [hook.sourceReference.uri, hook.sourceReference.location.line]),
    ...envelopes(run, 'stepDefinition').map((step) => [step.pattern.source, step.sourceReference.uri, step.sourceReference.location.line]),
  ];
  assert.deepEqual(located(bare), [
    ['steps.cjs', 8],
    ['steps.cjs', 14],
    ['a step that calls back with {string}', 'steps.cjs', 18],
    ["the hook's callback ran first", 'steps.cjs', 25],
    ['a synchronous step', 'steps.cjs', 30],
    ['a step that fails', 'steps.cjs', 34],
  ]);
  assert.deepEqual(located(agent), located(bare));
  assert.match(bare.summary, /✖ Given a step that fails # steps\.cjs:34/);
});

test("cucumber: a failing step's report holds the app's stack and no attachment; every message is as bare, ids and times aside", async () => {
  const { bare, agent } = await cucumber();
  const failed = envelopes(bare, 'testStepFinished').find((finished) => finished.testStepResult.exception?.message === 'the step fails');
  assert.match(failed?.testStepResult.message, /^Error: the step fails\n {4}at World\.<anonymous> \(.*steps\.cjs:35:9\)$/);
  assert.deepEqual(envelopes(bare, 'attachment'), []);
  assert.deepEqual(envelopes(agent, 'attachment'), []);
  assert.deepEqual(agent.messages, bare.messages);
});
