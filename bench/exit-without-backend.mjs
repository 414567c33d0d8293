// How long an app takes to exit under pyro-run when no backend is there, next to a healthy one:
// `node bench/exit-without-backend.mjs [--rounds N]` (needs `npm run build`).
//
// Apps: a hello world (bench/apps/hello.cjs), and a fork-heavy one (bench/apps/forks.cjs: 20
// children, each with pyro-run, each exiting at once). Backends: a healthy sink (bench/sink.mjs),
// a port nothing listens on (connection refused) and a name that does not resolve
// (`pyro-run-bench.invalid`). Each run is spawn → exit of `node --import <the preload> app`,
// both pipelines pointed at the backend; the rounds interleave the backends, and every round's
// value is paired with the healthy backend's of the same round. Prints medians (min–max) and what
// each missing backend adds to the healthy exit; bare node (no pyro-run) for scale.
import { createServer } from 'node:net';
import path from 'node:path';
import { countOption } from './lib/args.mjs';
import { BENCH, NODE, PYRO_REGISTER, cleanEnv } from './lib/contenders.mjs';
import { interleave } from './lib/interleave.mjs';
import { run } from './lib/proc.mjs';
import { startSink } from './lib/sink.mjs';
import { summary } from './lib/stats.mjs';
import { render, signed, spread } from './lib/table.mjs';

const APPS = [
  { id: 'hello', file: path.join(BENCH, 'apps/hello.cjs') },
  { id: '20 forks', file: path.join(BENCH, 'apps/forks.cjs') },
];
/** Acceptance (issue 16): with no server there, the exit is within this of a healthy one. */
const GOAL_MS = 700;

/** A loopback port that refuses connections: bound, then closed. */
async function refusedPort() {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** `url` undefined: bare node, without pyro-run. */
async function exitMs(app, url) {
  const env = { ...cleanEnv(), OTEL_SERVICE_NAME: 'bench', ...(url ? { PYROSCOPE_SERVER_ADDRESS: url, OTEL_EXPORTER_OTLP_ENDPOINT: url } : {}) };
  const preload = url ? ['--import', PYRO_REGISTER] : [];
  const started = process.hrtime.bigint();
  const result = await run(NODE[24], [...preload, app.file], { env, timeoutMs: 120_000 });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.code !== 0) throw new Error(`${app.id} against ${url} exited ${result.code}: ${result.stderr}`);
  return ms;
}

const rounds = countOption(process.argv, '--rounds', 5, 'node bench/exit-without-backend.mjs [--rounds N]');
const sink = await startSink();
try {
  const backends = [
    { id: 'bare node', url: undefined },
    { id: 'healthy', url: sink.url },
    { id: 'refused', url: `http://127.0.0.1:${await refusedPort()}` },
    { id: 'unresolvable', url: 'http://pyro-run-bench.invalid:4040' },
  ];
  const pairs = APPS.flatMap((app) => backends.map((backend) => ({ app, backend })));
  const raw = await interleave(
    rounds,
    pairs,
    (p) => `${p.app.id}/${p.backend.id}`,
    (p) => exitMs(p.app, p.backend.url),
    (text) => process.stderr.write(`\r${text}   `),
  );
  process.stderr.write('\n');
  const rows = [];
  const misses = [];
  for (const app of APPS) {
    const healthy = raw[`${app.id}/healthy`];
    for (const backend of backends) {
      const runs = raw[`${app.id}/${backend.id}`];
      const added = summary(runs.map((ms, i) => ms - healthy[i]));
      const missing = backend.id === 'refused' || backend.id === 'unresolvable';
      rows.push([app.id, backend.id, spread(summary(runs), 0), missing ? signed(added.median, 0) : '']);
      if (missing && !(added.median <= GOAL_MS)) misses.push(`${app.id}/${backend.id}`);
    }
  }
  process.stdout.write(
    `${render(`exit without a backend — Node 24, ${rounds} rounds interleaved; spawn → exit ms, median (min–max); "added" = median of per-round differences to the healthy backend`, ['app', 'backend', 'exit ms', 'added ms'], rows)}\n`,
  );
  process.stdout.write(
    `${misses.length === 0 ? 'PASS' : 'FAIL'}: no backend adds at most ${GOAL_MS} ms to the exit${misses.length ? ` (over: ${misses.join(', ')})` : ''}\n`,
  );
} finally {
  await sink.stop();
}
