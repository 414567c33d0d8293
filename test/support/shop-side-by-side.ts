/**
 * The example shop (examples/express/server.mjs) recorded several times at once, for comparing
 * recordings (`pyro-run diff`): one app per run, each with its own SHOP_PRICE_CART_WORK (1.3 makes
 * the checkout's priceCart 30% slower), under one load driver that sends each request to every app
 * (rotating which goes first). A 2-core machine shared with other work drifts between one run and
 * the next by more than the effects looked for; side by side, whatever the machine does hits every
 * app alike (docs/diff.md recommends the same). The driver runs until every app has answered
 * enough requests, within a time bound, not for a fixed time.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { type Child, repoRoot, runCli } from './child.js';

const SHOP = path.join(repoRoot, 'examples/express/server.mjs');

/**
 * Answers each app gives per route before the load stops: enough that the first requests, run
 * before V8 has optimized the code, weigh little beside the rest, so two recordings of the same
 * code read within a few per cent of each other.
 */
const WANTED = { checkout: 800, products: 400 };
const DRIVE_BOUND_MS = 90_000;
/** In flight per app: two, so a request sometimes waits for another, as under real load. */
const CONCURRENCY = 2;

type Route = keyof typeof WANTED;
/** Twice the checkouts for the products: the checkout is the endpoint whose change is to be seen. */
const ROUTES: Route[] = ['checkout', 'products', 'checkout'];

/**
 * A cart of eight lines: priceCart's work grows with the lines, the rest of a checkout
 * (applyDiscounts, express, JSON) does not, and moves between two processes by itself. With most
 * of the checkout's CPU in priceCart, its 30% slowdown reads well above the diff's 15% minimum
 * effect in the checkout's CPU per request.
 */
const CART = Array.from({ length: 8 }, (_, line) => ({ id: 3 + line * 39, quantity: 1 + (line % 3) }));

function send(base: string, route: Route, i: number): Promise<Response> {
  if (route === 'products') return fetch(`${base}/products/${(i * 37) % 2000}`);
  return fetch(`${base}/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ items: CART }),
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

/**
 * Records one app per entry of `runs` (its name → its SHOP_PRICE_CART_WORK) side by side under
 * `out`, with a 1 ms sampling interval; returns each run's folder (`out/<name>`), by name.
 */
export async function recordShops<Name extends string>(out: string, runs: Record<Name, string>): Promise<Record<Name, string>> {
  const apps: [string, Child][] = Object.entries<string>(runs).map(([name, work]) => [
    name,
    runCli(['--out', path.join(out, name), '--flush-interval', '1000', '--sampling-interval', '1000', SHOP], {
      env: { PORT: '0', SHOP_PRICE_CART_WORK: work },
    }),
  ]);
  try {
    const bases = await Promise.all(apps.map(async ([, app]) => `http://127.0.0.1:${(await app.line(/listening (\d+)/))[1]}`));
    const answered = await drive(bases);
    // Fewer than wanted (a very slow machine): the recordings are still used, as they are.
    if (answered.checkout < WANTED.checkout) process.stderr.write(`shop side by side: only ${JSON.stringify(answered)} answered within ${DRIVE_BOUND_MS} ms\n`);
  } finally {
    for (const [, app] of apps) app.process.kill('SIGTERM');
    for (const [name, app] of apps) assert.equal((await app.exit()).signal, 'SIGTERM', `${name}: ${app.stderr}`);
  }
  return Object.fromEntries(Object.keys(runs).map((name) => [name, path.join(out, name)])) as Record<Name, string>;
}
