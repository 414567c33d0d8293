/**
 * A report names what a user can act on: whose code a frame is (the app's, a package's, Node's,
 * V8's, pyro-run's), an anonymous function by its file and line, the agent's wrapper frames folded
 * out of the app's stacks (a leaf of the agent's named by its module), and a self-time leaf outside
 * the app's code with the app's function it ran for.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aggregateRun, type FlameTree, type RunAggregates } from '../../src/report/aggregate.js';
import { displayName, frameOwner } from '../../src/report/frame-owner.js';
import { loadRunSync } from '../../src/report/load-run.js';
import { spanIdOf, traceIdOf, writeRecording } from '../support/recording.js';
import { scratchDirs } from '../support/scratch.js';

const AGENT = '/srv/app/node_modules/pyro-run/dist';

const OWNERS: readonly [rule: string, name: string, file: string, owner: ReturnType<typeof frameOwner>][] = [
  ["the app's file", 'listArticles', '/srv/app/routes/articles.js', { kind: 'app' }],
  ["the app's ES module, by URL", 'handler', 'file:///srv/app/server.mjs', { kind: 'app' }],
  ['a package', 'parseRow', '/srv/app/node_modules/pg/lib/result.js', { kind: 'package', name: 'pg' }],
  ['a scoped package', 'send', '/srv/app/node_modules/@smithy/core/dist/client.js', { kind: 'package', name: '@smithy/core' }],
  [
    'a package nested in another is itself',
    'parse',
    '/srv/app/node_modules/sequelize/node_modules/pg-hstore/lib/index.js',
    { kind: 'package', name: 'pg-hstore' },
  ],
  ["Node's own", 'writev', 'node:net', { kind: 'node' }],
  ["V8's built-ins and pseudo-frames", 'JSON.stringify', '', { kind: 'runtime' }],
  ["the preload's body, run from its CommonJS file", 'query', `${AGENT}/preload/register.cjs`, { kind: 'agent', module: 'agent' }],
  ["a worker's preload body", 'startWorker', `${AGENT}/preload/worker.cjs`, { kind: 'agent', module: 'agent' }],
  ["an earlier build's ES module bundle", 'query', `file://${AGENT}/preload/register.js`, { kind: 'agent', module: 'agent' }],
  ['the preload bundle where recordings of earlier builds name it', 'query', `file://${AGENT}/register.js`, { kind: 'agent', module: 'agent' }],
  ['a vendored instrumentation', 'patchedQuery', `${AGENT}/vendor/instrumentation-pg.cjs`, { kind: 'agent', module: 'instrumentation-pg' }],
  ["OpenTelemetry's core bundle", 'with', `${AGENT}/vendor/otel.cjs`, { kind: 'agent', module: 'OpenTelemetry' }],
  [
    "the agent's folder guessed when the recording does not name it",
    'with',
    '/opt/x/node_modules/pyro-run/dist/vendor/otel.cjs',
    { kind: 'agent', module: 'OpenTelemetry' },
  ],
];

describe('frameOwner', () => {
  for (const [rule, name, file, owner] of OWNERS) {
    it(rule, () => assert.deepEqual(frameOwner(name, file, rule.includes('guessed') ? undefined : AGENT), owner));
  }
});

describe('displayName', () => {
  it('an anonymous function is named by its file and line', () => {
    assert.equal(displayName('(anonymous:L#60:C#20)', '/srv/app/routes/articles.js', 58), '<anonymous> articles.js:60');
    assert.equal(displayName('(anonymous)', 'file:///srv/app/server.mjs', 12), '<anonymous> server.mjs:12');
    assert.equal(displayName('(anonymous)', '', 0), '<anonymous> (no file: eval, new Function)');
  });
  it("V8's (idle) says its CPU time is the thread's own work outside JavaScript", () =>
    assert.equal(displayName('(idle)', '', 0), '(idle: event loop, I/O, native code)'));
  it('a named function is itself', () => assert.equal(displayName('listArticles', '/srv/app/a.js', 3), 'listArticles'));
});

const MS = 1_000_000;
const { fresh } = scratchDirs('pyro-run-frame-owner-');

function paths(a: RunAggregates, tree: FlameTree): string[] {
  const name = (frame: number) => a.strings[a.frames.name[frame] as number] as string;
  const out: string[] = [];
  const stack: string[] = [];
  tree.frame.forEach((frame, i) => {
    const depth = tree.depth[i] as number;
    stack.length = depth;
    if (i > 0) stack[depth - 1] = name(frame);
    if ((tree.self[i] as number) > 0) out.push(stack.slice(0, depth).join(' > '));
  });
  return out.sort();
}

describe("the agent's frames in a recording", () => {
  const functions = {
    handleRequest: { file: '/srv/app/server.js', line: 10 },
    '(anonymous:L#60:C#20)': { file: '/srv/app/routes/articles.js', line: 58 },
    guardedQuery: { file: `file://${AGENT}/preload/register.js`, line: 5000 },
    patchedQuery: { file: `${AGENT}/vendor/instrumentation-pg.cjs`, line: 1 },
    run: { file: 'node:internal/async_local_storage/async_context_frame', line: 60 },
    with: { file: `${AGENT}/vendor/otel.cjs`, line: 1 },
    'Client.query': { file: '/srv/app/node_modules/pg/lib/client.js', line: 500 },
    writev: { file: 'node:net', line: 900 },
  };
  const span = { spanId: spanIdOf(1), spanName: 'GET /articles', traceId: traceIdOf(1) };
  const dir = () =>
    writeRecording(fresh(), {
      functions,
      manifest: { agentDir: AGENT },
      windows: [
        {
          cpu: [
            { stack: ['handleRequest', '(anonymous:L#60:C#20)', 'guardedQuery', 'patchedQuery', 'run', 'with', 'Client.query', 'writev'], value: 6 * MS, span },
            { stack: ['handleRequest', '(anonymous:L#60:C#20)', 'guardedQuery', 'patchedQuery'], value: 3 * MS, span },
            { stack: ['handleRequest', '(anonymous:L#60:C#20)'], value: 2 * MS, span },
          ],
        },
      ],
      spanBatches: [[{ spanId: spanIdOf(1), traceId: traceIdOf(1), name: 'GET /articles', startNs: 1_000_000_000n, durationNs: 20 * MS, profiled: true }]],
    });

  it("are folded out of the app's stacks, with Node's frames between two of them; a leaf of theirs is named by its module", () => {
    const a = aggregateRun(loadRunSync(dir()));
    assert.deepEqual(paths(a, a.trees!.process.cpu), [
      'handleRequest > <anonymous> articles.js:60',
      'handleRequest > <anonymous> articles.js:60 > (pyro-run: instrumentation-pg)',
      'handleRequest > <anonymous> articles.js:60 > Client.query > writev',
    ]);
  });

  it("top self time names a leaf outside the app's code with the app's function it ran for; CPU is split by whose code ran", () => {
    const endpoint = aggregateRun(loadRunSync(dir())).endpoints[0]!;
    const a = aggregateRun(loadRunSync(dir()));
    const name = (frame: number | undefined) => (frame === undefined ? undefined : (a.strings[a.frames.name[frame] as number] as string));
    assert.deepEqual(
      endpoint.topSelf.map((t) => [name(t.frame), name(t.caller), t.value / MS]),
      [
        ['writev', '<anonymous> articles.js:60', 6],
        ['(pyro-run: instrumentation-pg)', '<anonymous> articles.js:60', 3],
        ['<anonymous> articles.js:60', undefined, 2],
      ],
    );
    assert.deepEqual(
      endpoint.byOwner.map((o) => [o.owner, o.value / MS]),
      [
        ['Node.js', 6],
        ['pyro-run & OpenTelemetry', 3],
        ['the app', 2],
      ],
    );
  });
});
