// CPU per request of a real app shape, with and without the agent, side by side:
// `node bench/postgres-app.mjs [a] [b] [--rounds N] [--seconds S] [--warmup W]` (contender ids of
// lib/contenders.mjs, each optionally id@{"ENV":"value"}; `pyro` and `node` unless said; needs
// `npm run build`, wrk, and Debian's postgresql).
//
// The app is examples/express-postgres (express 5, pg's Pool, its own schema and seed), against a
// throwaway PostgreSQL started as the tests start theirs (test/support/postgres.ts). Both apps run
// at once on the app core under their own wrk -c16, on each route in turn, measured after W seconds
// of warm-up (15, lib/side-by-side.mjs says why):
// - `/orders/:id`: one order and its lines, two queries — the light request, where the agent's
//   work per request weighs most;
// - `/reports/revenue`: a join and group-by in SQL, then ~20–50 ms of report building in JavaScript.
// Only the apps' CPU is counted (all their threads); the database's is the same for both. Prints
// each round and, per route, the median (min–max) of b's CPU per request over a's, as "a costs
// +x% CPU per request".
import path from 'node:path';
import { startPostgres } from '../dist/test/support/postgres.js';
import { countOption } from './lib/args.mjs';
import { launchApp } from './lib/app.mjs';
import { byId, contenderOf, REPO } from './lib/contenders.mjs';
import { STEADY_WARMUP_SECONDS, sideBySide } from './lib/side-by-side.mjs';
import { startSink } from './lib/sink.mjs';
import { summary } from './lib/stats.mjs';
import { findWrk } from './lib/wrk.mjs';

const USAGE = 'node bench/postgres-app.mjs [a] [b] [--rounds N] [--seconds S] [--warmup W]';
const rounds = countOption(process.argv, '--rounds', 3, USAGE);
const seconds = countOption(process.argv, '--seconds', 12, USAGE);
const warmupSeconds = countOption(process.argv, '--warmup', STEADY_WARMUP_SECONDS, USAGE);
const ids = process.argv.slice(2).filter((arg, i, all) => !arg.startsWith('--') && !all[i - 1]?.startsWith('--'));
const [a, b] = (ids.length === 2 ? ids : ['pyro', 'node']).map((id) => {
  const contender = contenderOf(id);
  if (!contender) throw new Error(`unknown contender ${id}; usage: ${USAGE}`);
  return contender;
});
const APP = path.join(REPO, 'examples/express-postgres/server.mjs');
/** Each route with the connections wrk keeps open: the report's requests are long enough that 16 would queue past wrk's 2-second timeout with two apps on one core. */
const ROUTES = [
  { path: '/orders/42', connections: 16 },
  { path: '/reports/revenue', connections: 4 },
];

const bin = findWrk();
if (!bin) throw new Error('wrk is not installed (apt-get install -y wrk)');
const postgres = await startPostgres();
const sink = await startSink();
try {
  const extraEnv = { DATABASE_URL: postgres.url, PORT: '0' };
  // The app seeds its tables on its first start: once, alone, before two of them race to.
  const seeding = await launchApp(byId('node'), APP, { sinkUrl: sink.url, extraEnv, timeoutMs: 120_000 });
  await seeding.handle.stop('SIGKILL');

  const costs = new Map(ROUTES.map(({ path }) => [path, []]));
  for (let round = 0; round < rounds; round++) {
    for (const { path: route, connections } of ROUTES) {
      const r = await sideBySide(bin, [a, b], APP, sink.url, { seconds, warmupSeconds, connections, round, path: route, extraEnv });
      if (r.a.failed + r.b.failed > 0) throw new Error(`${route}: ${r.a.failed} and ${r.b.failed} failed requests`);
      const extra = r.a.cpuMicrosPerRequest / r.b.cpuMicrosPerRequest - 1;
      costs.get(route).push(extra);
      process.stdout.write(
        `round ${round + 1}/${rounds} ${route}: ${a.label} ${r.a.cpuMicrosPerRequest.toFixed(0)} µs CPU a request, ${b.label} ${r.b.cpuMicrosPerRequest.toFixed(0)} µs (${percent(extra)})\n`,
      );
    }
  }
  for (const [route, extras] of costs) {
    const s = summary(extras);
    process.stdout.write(
      `${route}: ${a.label} costs ${percent(s.median)} (${percent(s.min)} to ${percent(s.max)}) CPU per request over ${b.label}, ${rounds} rounds of ${seconds} s after ${warmupSeconds} s of warm-up\n`,
    );
  }
} finally {
  await sink.stop();
  await postgres.stop();
}
process.exit(0);

function percent(x) {
  return `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
}
