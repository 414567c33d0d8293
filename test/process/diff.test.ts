/**
 * `pyro-run diff` as a CI job uses it, on real recordings of the example shop: one with the
 * checkout's hot function made 30% slower (SHOP_PRICE_CART_WORK=1.3) is told apart from the base —
 * that endpoint first, beyond the noise, that function first among its changes, `--fail-on` exits
 * 1 — and two recordings of the same code show nothing beyond the noise, and `--fail-on` exits 0.
 *
 * The three recordings are made at once, under one load driver that sends each request to all
 * three apps (in turn first): a 2-core machine shared with other work drifts between one run and
 * the next by more than the effect looked for, and side by side whatever the machine does hits
 * all three alike (docs/diff.md recommends the same). The driver runs until every app has answered
 * enough requests, within a time bound, not for a fixed time.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { type Child, repoRoot, runCli } from '../support/child.js';
import { scratchDirs } from '../support/scratch.js';

const SHOP = path.join(repoRoot, 'examples/express/server.mjs');
const { fresh } = scratchDirs('pyro-run-diff-');

/** Answers each app gives per route before the load stops; the checkout's change shows over this many. */
const WANTED = { checkout: 400, products: 200 };
const DRIVE_BOUND_MS = 90_000;
/** In flight per app: two, so a request sometimes waits for another, as under real load. */
const CONCURRENCY = 2;

type Route = keyof typeof WANTED;
/** Twice the checkouts for the products: the checkout is the endpoint whose change is to be seen. */
const ROUTES: Route[] = ['checkout', 'products', 'checkout'];

function send(base: string, route: Route, i: number): Promise<Response> {
  if (route === 'products') return fetch(`${base}/products/${(i * 37) % 2000}`);
  return fetch(`${base}/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      items: [
        { id: 3, quantity: 2 },
        { id: 42, quantity: 1 },
      ],
    }),
  });
}

/** Sends every request to every app (rotating which goes first) until each answered WANTED per route or time is up; returns the answers per route. */
async function drive(bases: readonly string[]): Promise<Record<Route, number>> {
  const answered: Record<Route, number> = { checkout: 0, products: 0 };
  const enough = () => (Object.keys(WANTED) as Route[]).every((route) => answered[route] >= WANTED[route]);
  const until = Date.now() + DRIVE_BOUND_MS;
  let next = 0;
  const loop = async () => {
    while (!enough() && Date.now() < until) {
      const i = next++;
      const route = ROUTES[i % ROUTES.length] as Route;
      const order = bases.map((_, k) => bases[(k + i) % bases.length] as string);
      await Promise.all(
        order.map(async (base) => {
          const response = await send(base, route, i);
          await response.arrayBuffer();
          assert.equal(response.status, 200, `${route} answered ${response.status}`);
        }),
      );
      answered[route]++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  return answered;
}

interface Recorded {
  base: string;
  same: string;
  slower: string;
}

/** The three apps recorded side by side: base, the same code again, priceCart 30% slower. */
async function record(out: string): Promise<Recorded> {
  const runs = { base: '1', same: '1', slower: '1.3' };
  const apps: [string, Child][] = Object.entries(runs).map(([name, work]) => [
    name,
    runCli(['--out', path.join(out, name), '--flush-interval', '1000', '--sampling-interval', '1000', SHOP], {
      env: { PORT: '0', SHOP_PRICE_CART_WORK: work },
    }),
  ]);
  try {
    const bases = await Promise.all(apps.map(async ([, app]) => `http://127.0.0.1:${(await app.line(/listening (\d+)/))[1]}`));
    const answered = await drive(bases);
    // Fewer than wanted (a very slow machine): the diff is still run, on what was recorded.
    if (answered.checkout < WANTED.checkout) process.stderr.write(`diff test: only ${JSON.stringify(answered)} answered within ${DRIVE_BOUND_MS} ms\n`);
  } finally {
    for (const [, app] of apps) app.process.kill('SIGTERM');
    for (const [name, app] of apps) assert.equal((await app.exit()).signal, 'SIGTERM', `${name}: ${app.stderr}`);
  }
  return { base: path.join(out, 'base'), same: path.join(out, 'same'), slower: path.join(out, 'slower') };
}

async function diff(args: string[]) {
  const child = runCli(['diff', ...args]);
  const exit = await child.exit(60_000);
  return { code: exit.code, stdout: child.stdout, stderr: child.stderr };
}

interface DiffJson {
  endpoints: {
    name: string;
    beyondNoise: boolean;
    metrics: { cpuPerRequest?: { relativeChange: number; beyondNoise: boolean } };
    functions: { function: { name: string; app: boolean } }[];
  }[];
  broken: { endpoint: string; metric: string; rule: string }[];
}

describe('pyro-run diff on recordings of the example shop', { timeout: 240_000 }, () => {
  let runs: Recorded;
  before(async () => {
    runs = await record(fresh());
  });

  it('the endpoint whose hot function got 30% slower comes first, beyond the noise, with that function first; --fail-on cpu-per-request>+10% exits 1 and says why', async (t) => {
    const text = await diff([runs.base, runs.slower]);
    t.diagnostic(`pyro-run diff base slower:\n${text.stdout}`);
    assert.equal(text.code, 0, text.stderr);
    const lines = text.stdout.split('\n');
    const firstEndpoint = lines.find((line) => / — .* requests, /.test(line));
    assert.match(firstEndpoint ?? '', /^POST \/checkout — .* beyond the noise$/, text.stdout);
    const firstFunction = lines[lines.findIndex((line) => line.startsWith('  Self CPU per request')) + 1];
    assert.match(firstFunction ?? '', /^ {4}priceCart \(server\.mjs:\d+\) /, text.stdout);

    const json = await diff([runs.base, runs.slower, '--json', '--fail-on', 'cpu-per-request>+10%']);
    assert.equal(json.code, 1, json.stderr);
    const result = JSON.parse(json.stdout) as DiffJson;
    const [checkout] = result.endpoints;
    assert.equal(checkout?.name, 'POST /checkout');
    assert.ok(checkout.beyondNoise && checkout.metrics.cpuPerRequest?.beyondNoise, JSON.stringify(checkout.metrics));
    assert.ok((checkout.metrics.cpuPerRequest?.relativeChange ?? 0) > 0.1, JSON.stringify(checkout.metrics));
    assert.equal(checkout.functions[0]?.function.name, 'priceCart');
    assert.deepEqual(
      result.broken.map((b) => [b.endpoint, b.metric, b.rule]),
      [['POST /checkout', 'cpuPerRequest', 'cpu-per-request>+10%']],
    );
    assert.match(
      json.stderr,
      /^pyro-run diff: POST \/checkout: CPU per request [\d.]+[µm]s → [\d.]+[µm]s \(\+[\d.]+[µm]s, \+\d+%\) breaks cpu-per-request>\+10%\n$/,
    );
  });

  it('two recordings of the same code: no endpoint beyond the noise, --fail-on cpu-per-request>+10% exits 0', async (t) => {
    const text = await diff([runs.base, runs.same, '--fail-on', 'cpu-per-request>+10%']);
    t.diagnostic(`pyro-run diff base same:\n${text.stdout}`);
    assert.equal(text.code, 0, text.stderr);
    assert.equal(text.stderr, '');
    assert.match(text.stdout, /\nNone of the 2 endpoints in both runs changed beyond the noise\.\n/);
    assert.doesNotMatch(text.stdout, /beyond the noise\n/);
  });
});
