/**
 * Invisible to the app (issue 13): what a library promises its users holds with the agent as
 * without it. Each case runs the real library from node_modules (so the bundled instrumentations
 * hook it) in a process of its own, once bare and once with the preload, and compares what the
 * process observed; the expectation itself is asserted on the bare run, so a case cannot pass by
 * both runs being wrong. The fixes are in build/instrumentation-patches.ts; the check against
 * the libraries' whole suites is bench/suite-diff.mjs.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { INSTRUMENTATION_PATCHES, patchSource } from '../../build/instrumentation-patches.js';
import { fixture, registerPath, repoRoot, runNode } from '../support/child.js';
import { freePort } from '../support/local-server.js';
import { startOpenAiLike } from '../support/openai-like.js';
import { startRabbitMq } from '../support/rabbitmq.js';
import { readRecording } from '../support/read-recording.js';
import { startRedis } from '../support/redis.js';
import { scratchDirs } from '../support/scratch.js';
import { skipUnless } from '../support/installed.js';

const { fresh } = scratchDirs('pyro-run-transparency-');
const APP = fixture('apps/library-expectations.cjs');

interface Observed {
  bare: unknown;
  agent: unknown;
  warnings: string[];
  spanScopes: () => string[];
}

/**
 * What the fixture printed for `name` (given `caseArgs`), bare and with the agent (recording locally
 * into a scratch folder), the agent's lines on stderr (bare, stderr must be empty), and the
 * instrumentations whose spans the agent run recorded (so a case can tell that the instrumentation
 * it is about was there).
 */
async function observe(name: string, agentEnv: Record<string, string> = {}, caseArgs: string[] = []): Promise<Observed> {
  const run = async (args: string[], env: Record<string, string>) => {
    const child = runNode([...args, APP, name, ...caseArgs], { env });
    const exit = await child.exit();
    assert.equal(exit.code, 0, `${name}${args.length ? ' with the agent' : ''}: ${child.stdout}${child.stderr}`);
    return { printed: JSON.parse(child.stdout) as unknown, stderr: child.stderr.split('\n').filter((line) => line !== '') };
  };
  const bare = await run([], {});
  assert.deepEqual(bare.stderr, []);
  const out = fresh();
  const agent = await run(['--import', registerPath], { PYRO_RUN_OUTPUT_DIR: out, PYRO_RUN_QUIET: 'on', ...agentEnv });
  const spanScopes = () => [...new Set(readRecording(out).spans.map((span) => span.scope.name))].sort();
  return { bare: bare.printed, agent: agent.printed, warnings: agent.stderr, spanScopes };
}

/** The agent's run printed what the bare one did and warned of nothing, with `instrumentation` there: it recorded spans. */
function assertSameWith(instrumentation: string, { bare, agent, warnings, spanScopes }: Observed): void {
  assert.deepEqual(agent, bare);
  assert.deepEqual(warnings, []);
  const scopes = spanScopes();
  assert.ok(scopes.includes(`@opentelemetry/instrumentation-${instrumentation}`), `no span of ${instrumentation}'s among ${scopes.join(', ')}`);
}

test('router driven with a response that is no EventEmitter: the handlers run, nothing throws, now or a turn later', async () => {
  const { bare, agent, warnings } = await observe('router with a plain response');
  assert.deepEqual(bare, ['middleware', 'handler']);
  assert.deepEqual(agent, bare);
  assert.deepEqual(warnings, []);
});

test("express's Router driven with a response that is no EventEmitter, inside a span: the handler runs, nothing throws", async () => {
  // The router instrumentation off: the express instrumentation's part on its own (router's is above).
  const { bare, agent, warnings } = await observe('express Router with a plain response, in a span', { OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'router' });
  assert.deepEqual(bare, ['handler']);
  assert.deepEqual(agent, bare);
  assert.deepEqual(warnings, []);
});

test("express: a middleware's next is req.next, in a nested router too, and res.format's callbacks get it", async () => {
  const { bare, agent, warnings } = await observe('express next is req.next');
  assert.deepEqual(bare, [
    ['first middleware', true],
    ['nested router middleware', true],
    ['res.format callback', true],
  ]);
  assert.deepEqual(agent, bare);
  assert.deepEqual(warnings, []);
});

test("koa: use() of something that is no function throws koa's own TypeError", async () => {
  const { bare, agent, warnings } = await observe('koa use of a non-function');
  assert.deepEqual(bare, Array(6).fill('TypeError: middleware must be a function!'));
  assert.deepEqual(agent, bare);
  assert.deepEqual(warnings, []);
});

/** The agent's warnings, not quiet (local mode's notices and summary left out). */
const warningsOnly = (lines: string[]) => lines.filter((line) => line.includes('warning'));

test("http: a server fed mock requests (server.emit('request', req, res)) hands them to its listener; the instrumentation that fails on them stands down, warned once, and not at all when quiet", async () => {
  const loud = await observe('http server fed mock requests', { PYRO_RUN_QUIET: 'off' });
  assert.deepEqual(loud.bare, ['null', true, 'no url', true, '/with-headers', true, '/without-headers', true]);
  assert.deepEqual(loud.agent, loud.bare);
  const warnings = warningsOnly(loud.warnings);
  assert.equal(warnings.length, 1, loud.warnings.join('\n'));
  assert.match(
    warnings[0] ?? '',
    /^pyro-run: warning: @opentelemetry\/instrumentation-http failed in its wrapper of emit\(\) \(.+\); that call ran without it, the app is not affected$/,
  );
  const quiet = await observe('http server fed mock requests');
  assert.deepEqual(quiet.agent, quiet.bare);
  assert.deepEqual(quiet.warnings, []);
});

test('http: whatever a request listener throws reaches the caller of emit as thrown, a falsy value too', async () => {
  const observed = await observe('http request listener throws');
  assert.deepEqual(observed.bare, Array(6).fill('threw it'));
  assertSameWith('http', observed);
});

test('connect: a mounted http.Server and a mounted connect app answer under their path, the app learns its route, error handlers are told by arity', async () => {
  const { bare, agent, warnings } = await observe('connect mounts servers and apps', { PYRO_RUN_QUIET: 'off' });
  const seen = bare as { responses: string[]; adminRoute: string };
  assert.deepEqual(seen.responses, ['200 blog /post', '200 blog /', '200 admin /users', '200 recovered boom']);
  assert.equal(seen.adminRoute, '/admin');
  assert.deepEqual(agent, bare);
  assert.deepEqual(warningsOnly(warnings), []);
});

test('restify: handlers keep their names (timers, debug info), an async handler is awaited, an error handler runs on errors only; no span is ended twice', async () => {
  const { bare, agent, warnings } = await observe('restify handlers by name, arity and kind', { PYRO_RUN_QUIET: 'off' });
  const seen = bare as { timers: string[][]; responses: string[] };
  assert.deepEqual(seen.timers, [
    ['first', 'syncHandler'],
    ['first', 'asyncHandler'],
    ['first', 'handler-0'],
    ['first', 'failing', 'recover'],
  ]);
  assert.equal(seen.responses[3], '200 {"recovered":"boom"}');
  assert.deepEqual(agent, bare);
  assert.deepEqual(warningsOnly(warnings), []);
});

test("hapi: a route's options function, its handler and an extension run with the bind context; handlers keep their names; the client's address is Node's after the socket is gone", async () => {
  const { bare, agent, warnings } = await observe('hapi bind context, handler names and remote address', { PYRO_RUN_QUIET: 'off' });
  const seen = bare as { seen: unknown[][]; responses: string[]; handlers: string[][] };
  assert.deepEqual(seen.responses[0], 'hello from options');
  assert.deepEqual(seen.handlers, [
    ['/later', 'later'],
    ['/options', 'greet'],
  ]);
  assert.deepEqual(
    seen.seen.find(([what]) => what === 'remoteAddress after destroy'),
    ['remoteAddress after destroy', null],
  );
  assert.deepEqual(agent, bare);
  assert.deepEqual(warningsOnly(warnings), []);
});

test("a connection refused with no 'error' listener throws as in Node, whatever instruments the socket", async () => {
  const { bare, agent, warnings } = await observe('net connection refused, unhandled', {}, [String(await freePort())]);
  assert.equal(bare, 'uncaught ECONNREFUSED');
  assert.equal(agent, bare);
  assert.deepEqual(warnings, []);
});

test("no instrumentation listens for 'error' on the app's emitters by name: errors are watched through events.errorMonitor, which handles nothing", () => {
  const vendor = path.join(repoRoot, 'dist/vendor');
  // host-metrics listens on child processes of its own.
  const bundles = readdirSync(vendor).filter((file) => file.startsWith('instrumentation-') && file !== 'instrumentation-host-metrics.cjs');
  assert.ok(bundles.length > 30);
  // A listener added by name, or through a list of event names it loops over.
  const listening = /\.(?:on|once|addListener|prependListener|prependOnceListener)\("error"|\[[^\]]*"error"[^\]]*\]\)\s*\w+\.(?:on|once)\(/;
  for (const bundle of bundles) assert.doesNotMatch(readFileSync(path.join(vendor, bundle), 'utf8'), listening, bundle);
});

test('socket.io: a listener comes off with off(); listeners() lists what the app added', async () => {
  const { bare, agent, warnings } = await observe('socket.io listeners on and off');
  assert.deepEqual(bare, { seen: ['greet a', 'once b'], listed: [[true, 'greet', 1, 'Function', ['length', 'name']]], afterOff: 0, afterOnce: 0 });
  assert.deepEqual(agent, bare);
  assert.deepEqual(warnings, []);
});

test("http client: a URL's encoded credentials, a URL with options, raw headers reach Node as the app gave them", async () => {
  const { bare, agent, warnings } = await observe('http client arguments as given');
  const basic = `Basic ${Buffer.from('user:p@ss').toString('base64')}`;
  assert.deepEqual(bare, [
    { path: '/url', authorization: basic, raw: null },
    { path: '/string', authorization: basic, raw: 'merged' },
    { path: '/raw', raw: 'array' },
  ]);
  assert.deepEqual(agent, bare);
  assert.deepEqual(warnings, []);
});

test('a request and its response have the same own keys as without the agent: the context binding of their listeners adds none that show', async () => {
  const { bare, agent, warnings } = await observe('http request and response keys');
  assert.ok((bare as { req: string[] }).req.includes('method'));
  assert.deepEqual(agent, bare);
  assert.deepEqual(warnings, []);
});

test("mysql2: a query's callback runs with the query as `this`", async () => {
  const { bare, agent, warnings } = await observe('mysql2 query callback this', {}, [String(await freePort())]);
  assert.deepEqual(bare, ['Query', 'SELECT 1', 'ECONNREFUSED']);
  assert.deepEqual(agent, bare);
  assert.deepEqual(warnings, []);
});

test('graphql: a resolver that fails with no error value (a bare Promise.reject(), throw null) is reported by graphql, as without the agent', async () => {
  const observed = await observe('graphql resolvers failing without an error');
  const { errors } = observed.bare as { errors: { message: string }[] };
  assert.deepEqual(errors.map((error) => error.message).sort(), ['Unexpected error value: null', 'Unexpected error value: undefined']);
  assertSameWith('graphql', observed);
});

test("dataloader: batch functions that return no promise, throw, or reject with nothing get DataLoader's own answers, as without the agent", async () => {
  const observed = await observe('dataloader batch functions that break the contract');
  const bare = observed.bare as Record<string, [string, string]>;
  assert.match(bare.null![1], /did not return a Promise/);
  assert.deepEqual(bare.rejectsWithNothing, ['error', 'undefined']);
  assertSameWith('dataloader', observed);
});

test("graphql: after an execute(), the schema's resolvers answer executeSync() and a direct call, and read as the app wrote them", async () => {
  const { bare, agent, warnings } = await observe('graphql resolvers after execute');
  assert.deepEqual(bare, {
    first: { data: { hello: 'hello a' } },
    sync: { data: { hello: 'hello b' } },
    direct: 'hello c',
    shape: ['hello', 2, 'Function', ['length', 'name']],
  });
  assert.deepEqual(agent, bare);
  assert.deepEqual(warnings, []);
});

test("the agent takes no numbers from the app's Math.random (a seeded sequence stays the app's): spans get their ids elsewhere", async () => {
  const { bare, agent, warnings } = await observe('Math.random left to the app');
  assert.equal(bare, 0);
  assert.equal(agent, bare);
  assert.deepEqual(warnings, []);
});

test('no code the agent loads calls Math.random (host-metrics, off by default, aside)', () => {
  const vendor = readdirSync(path.join(repoRoot, 'dist/vendor'))
    .filter((file) => file.endsWith('.cjs') && file !== 'instrumentation-host-metrics.cjs')
    .map((file) => path.join(repoRoot, 'dist/vendor', file));
  const own = readdirSync(path.join(repoRoot, 'dist/src'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.js'))
    .map((file) => path.join(repoRoot, 'dist/src', file));
  const preloads = readdirSync(path.join(repoRoot, 'dist/preload')).map((file) => path.join(repoRoot, 'dist/preload', file));
  const files = [...preloads, ...vendor, ...own];
  for (const file of files) assert.doesNotMatch(readFileSync(file, 'utf8'), /Math\.random\(/, file);
});

test('a rejection the app leaves unhandled ends the process as in Node, whatever instrumentation watched the promise: a failed dns.promises.lookup, a refused node-redis command (redis 5 and 6), a refused OpenAI call', {
  skip: skipUnless('redis'),
}, async () => {
  const redis = await startRedis();
  const openai = await startOpenAiLike();
  try {
    const runs = [
      { name: 'dns.promises.lookup', args: [], env: {}, reason: /ENOTFOUND|EAI_AGAIN/ },
      { name: 'redis command', args: [redis.url], env: { REDIS_MODULE: 'redis' }, reason: /ERR unknown command/ },
      { name: 'redis command', args: [redis.url], env: { REDIS_MODULE: 'redis5' }, reason: /ERR unknown command/ },
      { name: 'openai chat completion', args: [openai.baseURL], env: {}, reason: /BadRequestError: 400 The model `no-such-model` does not exist/ },
    ];
    for (const run of runs) {
      for (const agent of [false, true]) {
        const app = fixture('apps/unhandled-rejection.cjs');
        const child = runNode(agent ? ['--import', registerPath, app, run.name, ...run.args] : [app, run.name, ...run.args], {
          env: { ...run.env, PYRO_RUN_OUTPUT_DIR: fresh(), PYRO_RUN_QUIET: 'on' },
        });
        const exit = await child.exit();
        const label = `${run.name} ${run.env.REDIS_MODULE ?? ''}${agent ? ' with the agent' : ''}`;
        assert.equal(exit.code, 1, `${label}: ${child.stderr}`);
        assert.match(child.stderr, run.reason, label);
      }
    }
  } finally {
    await Promise.all([redis.stop(), openai.close()]);
  }
});

test("lru-memoizer: the memoized function has its cache's methods and options (del, keys, reset, on, hash, load, max)", async () => {
  const { bare, agent, warnings } = await observe('lru-memoizer memoized function');
  const seen = bare as { first: string; keys: string[]; after: string[]; own: string[] };
  assert.deepEqual([seen.first, seen.keys, seen.after], ['user 7', ['id:7'], []]);
  assert.ok(
    ['del', 'hash', 'keys', 'load', 'max', 'on', 'reset'].every((name) => seen.own.includes(name)),
    seen.own.join(),
  );
  assert.deepEqual(agent, bare);
  assert.deepEqual(warnings, []);
});

test('every function the instrumented libraries export, or put on what they make, reads the same: name, arity, kind, own properties', async () => {
  const { bare, agent, warnings } = await observe('library function shapes');
  assert.ok(Object.keys((bare as Record<string, object>)['restify instance']!).length > 20, 'instances are looked at');
  assert.deepEqual(agent, bare);
  assert.deepEqual(warnings, []);
});

test("pyro-run adds one global of its own (and OpenTelemetry's API registry, as any OpenTelemetry set-up does)", async () => {
  const { bare, agent } = await observe('globals after a request');
  const added = (agent as string[]).filter((name) => !(bare as string[]).includes(name));
  assert.deepEqual(added, ['Symbol(opentelemetry.js.api.1)', 'Symbol(pyro-run)']);
  assert.deepEqual(
    (bare as string[]).filter((name) => !(agent as string[]).includes(name)),
    [],
  );
});

test('pino: with no logs pipeline asked for, the logger writes to the destination it is given, itself its stream, line for line', async () => {
  const { bare, agent, warnings } = await observe('pino writes to its destination');
  assert.deepEqual(bare, {
    own: true,
    lines: [
      { level: 30, msg: 'first' },
      { level: 40, part: 'db', rows: 2, msg: 'second' },
    ],
  });
  assert.deepEqual(agent, bare);
  assert.deepEqual(warnings, []);
});

test("knex's asyncStackTraces: a failed query's stack starts at the app's call, for raw, query and schema builders", async () => {
  // A port nothing listens on: every query fails at once.
  const { bare, agent, warnings } = await observe('knex async stack traces', {}, [String(await freePort())]);
  const [raw, query, schema] = bare as string[][];
  assert.deepEqual(raw?.slice(0, 2), ['at Object.raw', 'at knex.value']);
  assert.deepEqual(query, ['at Object.queryBuilder', 'at createQueryBuilder', 'at knex']);
  assert.equal(schema?.[0], 'at knex.get');
  assert.deepEqual(agent, bare);
  assert.deepEqual(warnings, []);
});

test("openai: the app reads a call's body once, the way it asks — parse(), asResponse(), withResponse() — and a streamed response is the SDK's APIPromise", async () => {
  const api = await startOpenAiLike();
  try {
    const observed = await observe('openai calls as the SDK returns them', {}, [api.baseURL]);
    const events = ['response.created', 'response.output_text.delta', 'response.output_text.delta', 'response.output_item.done', 'response.completed'];
    assert.deepEqual(observed.bare, {
      parse: ['hello there', null],
      asResponse: [200, 'chatcmpl-1'],
      create: 'hello there',
      withResponse: [[0.25, -0.5, 1], 200, 'string'],
      streaming: ['APIPromise', 'function', 'function'],
      stream: [200, events],
      refused: ['BadRequestError', 400, 'model_not_found'],
    });
    assertSameWith('openai', observed);
  } finally {
    await api.close();
  }
});

test('AWS SDK v3: a middleware stack whose handler returns a plain value, nothing, or throws settles with what the handler gave', async () => {
  const observed = await observe('smithy middleware stack with plain handlers');
  assert.deepEqual(observed.bare, [
    { value: { output: 42, input: { marked: true } } },
    { value: null },
    { error: 'refused at once' },
    { value: { output: 'later' } },
  ]);
  assertSameWith('aws-sdk', observed);
});

test("AWS SDK v3: a client's results and service errors read the same (SQS against a server that answers as SQS does)", async () => {
  const observed = await observe('sqs client against an SQS-like server');
  const listed = observed.bare as [string[], number, string][];
  assert.deepEqual(listed[0], [['/000000000000/orders'], 200, 'request-1']);
  assert.deepEqual(listed[2], ['QueueDoesNotExist', 'The specified queue does not exist.', 400, 'request-3']);
  assertSameWith('aws-sdk', observed);
});

test("NestJS: a guard's ExecutionContext hands it the controller's own method (getHandler()), which apps compare and key maps by", async () => {
  const observed = await observe('nest guard sees the controller method');
  assert.deepEqual(observed.bare, [
    { same: true, keyed: 'orders:read', name: 'work', length: 1, kind: 'Function', roles: ['clerk'], class: true },
    '200 {"id":7}',
  ]);
  assertSameWith('nestjs-core', observed);
});

test("amqplib: waitForConfirms() on a confirm channel closed with messages published without a callback rejects with 'channel closed'; with callbacks, each is called", {
  skip: skipUnless('rabbitmq'),
}, async () => {
  const broker = await startRabbitMq();
  try {
    const observed = await observe('amqplib confirms when the channel closes', {}, [broker.url]);
    assert.deepEqual(observed.bare, { withCallbacks: Array(10).fill(null), afterClose: 'channel closed' });
    assertSameWith('amqplib', observed);
  } finally {
    await broker.stop();
  }
});

test("@koa/router: a route's functions on the router's stack keep their names and arity, and nothing is set on the app's functions", async () => {
  const observed = await observe('@koa/router handlers as written');
  assert.deepEqual(observed.bare, {
    body: 'user 7',
    stack: [
      [
        '/users/:id',
        [
          ['loadUser', 2, 'AsyncFunction', ['length', 'name']],
          ['showUser', 1, 'AsyncFunction', ['length', 'name']],
        ],
      ],
    ],
    symbols: [[], []],
  });
  assertSameWith('koa', observed);
});

test('a fix whose text is not in the instrumentation (exactly once) fails the build, naming the file', () => {
  const patch = { why: 'w', find: 'a(1);', replace: 'b(1);' };
  assert.equal(patchSource('x; a(1); y', 'f.cjs', [patch]), 'x; b(1); y');
  assert.throws(() => patchSource('x; y', 'f.cjs', [patch]), /^Error: f\.cjs: the text to patch \(w\) is not there; /);
  assert.throws(() => patchSource('a(1); a(1);', 'f.cjs', [patch]), /is there more than once/);
});

test('every fix applies to the instrumentation installed now', () => {
  for (const fixes of INSTRUMENTATION_PATCHES) {
    const file = `${repoRoot}/node_modules/${fixes.package}/${fixes.file}`;
    assert.doesNotThrow(() => patchSource(readFileSync(file, 'utf8'), file, fixes.patches), fixes.package);
  }
});
