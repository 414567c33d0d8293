/**
 * The frameworks people run, installed as they install them (issue 20): what a user reads — the
 * report's endpoints, the root spans' names, the profiles' span_name — names each route.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { childEnv, fixture, runCli } from '../support/child.js';
import { load, serveThenTerminate } from '../support/load.js';
import { freePort } from '../support/local-server.js';
import { NPM_TIMEOUT_MS, npm } from '../support/npm.js';
import { readRecording, readRun } from '../support/read-recording.js';
import { OtlpSpanKind } from '../support/receiver.js';
import { scratchDirs } from '../support/scratch.js';

const { fresh } = scratchDirs('pyro-run-frameworks-');

/** Each name with how often it occurs, sorted by name. */
const tally = (names: readonly string[]) =>
  [...names.reduce((m, n) => m.set(n, (m.get(n) ?? 0) + 1), new Map<string, number>())].sort(([a], [b]) => (a < b ? -1 : 1));

test('fastify 5: each route is its own endpoint with its exact count, and its root spans and profiles carry the route', async (t) => {
  const out = fresh();
  const app = runCli(['--out', out, '--quiet', '--flush-interval', '1000', '--sampling-interval', '2000', fixture('apps/fastify.cjs')]);
  t.after(() => app.process.kill('SIGKILL'));
  const requests = 60;
  await serveThenTerminate(app, (i) => (i % 3 === 0 ? '/api/split' : `/api/work/${i}`), requests, 6);

  const expected = [
    ['GET /api/split', requests / 3],
    ['GET /api/work/:id', (requests * 2) / 3],
  ];
  const run = readRecording(out);
  const roots = run.spans.filter((span) => span.kind === OtlpSpanKind.Server);
  assert.deepEqual(tally(roots.map((span) => span.name)), expected);
  for (const span of roots) assert.equal(span.attributes['http.route'], span.name.slice('GET '.length));
  // A window cut before a request reached its route's handler labels what ran so far `GET`.
  const labelled = run.profiles.flatMap((p) => p.samples).filter((s) => s.labels.span_name !== undefined);
  const routed = labelled.filter((s) => expected.some(([name]) => name === s.labels.span_name));
  t.diagnostic(`${routed.length} of ${labelled.length} labelled samples carry their route`);
  assert.ok(labelled.length >= 100 && routed.length / labelled.length >= 0.99, `${routed.length} of ${labelled.length} labelled samples carry their route`);

  const report = runCli(['report', run.dir, '--json']);
  assert.equal((await report.exit()).code, 0, report.stderr);
  const { endpoints } = JSON.parse(report.stdout) as { endpoints: { name: string; count: number }[] };
  assert.deepEqual(
    endpoints.map((e) => [e.name, e.count]).sort(([a], [b]) => (a! < b! ? -1 : 1)),
    expected,
  );
});

test("express 5: each layer is one span, as on express 4 — router's instrumentation stands down where express's spans; a plain router keeps its spans", async (t) => {
  const out = fresh();
  const app = runCli(['--out', out, '--quiet', fixture('apps/express-layers.cjs')]);
  t.after(() => app.process.kill('SIGKILL'));
  const paths = ['/api/items/7', '/fail', '/plain/3'];
  const rounds = 10;
  await serveThenTerminate(app, (i) => paths[i % paths.length]!, paths.length * rounds, 3);

  const { spans } = readRecording(out);
  const roots = spans.filter((span) => span.kind === OtlpSpanKind.Server);
  assert.deepEqual(tally(roots.map((span) => span.name)), [
    ['GET /api/items/:id', rounds],
    ['GET /fail', rounds],
    ['GET /plain/:id', rounds],
  ]);
  const scope = (name: string) => name.replace('@opentelemetry/instrumentation-', '');
  const expectedLayers: Record<string, [string, number][]> = {
    // The app's middleware, the mounted router, the route: express's spans, once each.
    'GET /api/items/:id': [
      ['express: middleware - stamp', 1],
      ['express: request handler', 1],
      ['express: router - /items/:id', 1],
    ],
    // The error middleware: express's instrumentation does not span it, router's still does.
    'GET /fail': [
      ['express: middleware - stamp', 1],
      ['express: request handler', 1],
      ['router: middleware - recover', 1],
    ],
    // A router without express: express wrapped its route (the Router prototype is shared),
    // router's spans the handler inside it, which express does not.
    'GET /plain/:id': [
      ['express: request handler', 1],
      ['router: request handler - /plain/:id', 1],
    ],
  };
  for (const root of roots) {
    const below = spans.filter((span) => span.traceId === root.traceId && span !== root);
    assert.deepEqual(tally(below.map((span) => `${scope(span.scope.name)}: ${span.name}`)), expectedLayers[root.name], root.name);
    for (const span of below)
      assert.equal(
        span.parentSpanId === root.spanId || below.some((other) => other.spanId === span.parentSpanId),
        true,
        `${span.name} is in its request's tree`,
      );
  }
});

/** What `pyro-run report --json` says of each endpoint: its count and the names of its top self-time functions. */
async function reportEndpoints(runDir: string): Promise<Map<string, { count: number; top: string[] }>> {
  const report = runCli(['report', runDir, '--json']);
  assert.equal((await report.exit()).code, 0, report.stderr);
  const json = JSON.parse(report.stdout) as {
    endpoints: { name: string; count: number; topSelf: { frame: number }[] }[];
    frames: { name: number[] };
    strings: string[];
  };
  return new Map(json.endpoints.map((e) => [e.name, { count: e.count, top: e.topSelf.map((t) => json.strings[json.frames.name[t.frame]!]!) }]));
}

test('Next.js 16 (app router) through `pyro-run npx next start`: its routes are the endpoints, its own functions named, the service its package.json name', {
  timeout: NPM_TIMEOUT_MS + 180_000,
}, async (t) => {
  const project = fresh();
  cpSync(fixture('next-app'), project, { recursive: true });
  npm(['install', '--no-package-lock'], project);
  // The build, as users run it (with the Node under test, first on PATH).
  execFileSync('npx', ['next', 'build'], { cwd: project, env: childEnv({ NEXT_TELEMETRY_DISABLED: '1' }), stdio: 'ignore', timeout: 180_000 });

  const out = fresh();
  const port = await freePort();
  const app = runCli(
    [
      '--out',
      out,
      '--quiet',
      '--log-level',
      'debug',
      '--flush-interval',
      '1000',
      '--sampling-interval',
      '2000',
      'npx',
      'next',
      'start',
      '-p',
      String(port),
      '-H',
      '127.0.0.1',
    ],
    { cwd: project, env: { NEXT_TELEMETRY_DISABLED: '1' } },
  );
  t.after(() => app.process.kill('SIGKILL'));
  await app.line(/Ready in/, 60_000);
  // The maps under .next/ are found from the project folder (the entry script is next's own), and
  // apply to the windows cut from then on.
  const [, maps] = await app.line(/source maps: (\d+) found/, 60_000, 'stderr');
  assert.ok(Number(maps) > 0);
  const requests = 40;
  await load(`http://127.0.0.1:${port}`, (i) => (i % 2 === 0 ? '/api/work' : '/'), requests, 4);
  app.process.kill('SIGTERM');
  await app.exit();

  const run = readRecording(out);
  assert.equal(run.manifest.service, 'next-shop');
  const endpoints = await reportEndpoints(run.dir);
  assert.deepEqual(
    [...endpoints].map(([name, e]) => [name, e.count]).sort(([a], [b]) => (a! < b! ? -1 : 1)),
    [
      ['GET /', requests / 2],
      ['GET /api/work', requests / 2],
    ],
  );
  assert.ok(
    endpoints.get('GET /api/work')?.top.includes('work_next'),
    `work_next among the top self time of GET /api/work: ${endpoints.get('GET /api/work')?.top}`,
  );
  assert.ok(endpoints.get('GET /')?.top.includes('render_home'), `render_home among the top self time of GET /: ${endpoints.get('GET /')?.top}`);
});

test('NestJS 12 with its shutdown hooks: routes as endpoints, its functions named, and SIGTERM ends it as it would without pyro-run (143), flushed first', {
  timeout: NPM_TIMEOUT_MS + 120_000,
}, async (t) => {
  const project = fresh();
  cpSync(fixture('nest-app'), project, { recursive: true });
  npm(['install', '--no-package-lock'], project);
  const out = fresh();
  const app = runCli(['--out', out, '--quiet', '--flush-interval', '60000', '--sampling-interval', '2000', 'main.js'], { cwd: project });
  t.after(() => app.process.kill('SIGKILL'));
  const port = (await app.line(/listening (\d+)/, 60_000))[1];
  const requests = 40;
  await load(`http://127.0.0.1:${port}`, (i) => (i % 2 === 0 ? `/api/work/${i}` : '/api/health'), requests, 4);
  const stopping = Date.now();
  app.process.kill('SIGTERM');
  const exit = await app.exit();
  assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: null, signal: 'SIGTERM' }, app.stderr);
  assert.ok(Date.now() - stopping < 3000, `ended ${Date.now() - stopping} ms after SIGTERM`);

  const run = readRecording(out);
  assert.equal(run.manifest.service, 'nest-shop');
  // One window, at 60 s: what was profiled came in the flush at SIGTERM.
  assert.ok(run.manifest.counts.windows >= 1, 'the last window was flushed');
  const endpoints = await reportEndpoints(run.dir);
  assert.deepEqual(
    [...endpoints].map(([name, e]) => [name, e.count]).sort(([a], [b]) => (a! < b! ? -1 : 1)),
    [
      ['GET /api/health', requests / 2],
      ['GET /api/work/:id', requests / 2],
    ],
  );
  assert.ok(
    endpoints.get('GET /api/work/:id')?.top.includes('work_nest'),
    `work_nest among the top self time of GET /api/work/:id: ${endpoints.get('GET /api/work/:id')?.top}`,
  );
});

for (const mode of ['cluster', 'fork'] as const) {
  test(`PM2 7 in ${mode} mode, \`pyro-run npx pm2 start ecosystem.config.cjs\`: each app process is recorded under its PM2 name with the ecosystem file's settings, PM2's own processes are not`, {
    timeout: NPM_TIMEOUT_MS + 120_000,
  }, async (t) => {
    const project = fresh();
    cpSync(fixture('pm2-app'), project, { recursive: true });
    npm(['install', '--no-package-lock'], project);
    const out = fresh();
    const port = await freePort();
    const env = { PM2_HOME: path.join(project, '.pm2'), PM2_MODE: mode, APP_PORT: String(port), RECORD_TO: out };
    const pm2 = (...args: string[]) => execFileSync('npx', ['pm2', ...args], { cwd: project, env: childEnv(env), stdio: 'ignore', timeout: 60_000 });
    t.after(() => pm2('kill'));
    const start = runCli(['npx', 'pm2', 'start', 'ecosystem.config.cjs'], { cwd: project, env });
    assert.equal((await start.exit(60_000)).code, 0, start.stderr);
    const requests = 20;
    await load(`http://127.0.0.1:${port}`, () => '/', requests, 2);
    // PM2 stops its processes with SIGINT, then the daemon.
    pm2('kill');

    const runs = readdirSync(out);
    assert.equal(runs.length, mode === 'cluster' ? 2 : 1, `one recording per app process, none of PM2's own: ${runs.join(', ')}`);
    let spans = 0;
    for (const name of runs) {
      assert.match(name, /^api-/);
      const run = readRun(path.join(out, name));
      assert.equal(run.manifest.service, 'api');
      assert.equal(run.manifest.complete, true, `${name} was flushed when PM2 stopped it`);
      spans += run.spans.filter((span) => span.kind === OtlpSpanKind.Server).length;
    }
    assert.equal(spans, requests, 'every request was recorded, by the process that served it');
  });
}
