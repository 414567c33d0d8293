// The spans pyro-run sends next to those OpenTelemetry's own register sends, for the same app and
// requests: `node bench/span-shapes.mjs [client…]` (needs `npm run build`; clients: http, fetch, pg,
// ioredis, redis, mysql2; default all). Each client runs test/fixtures/apps/pooled-clients.cjs
// against a real server started as the process tests start theirs (PostgreSQL, Redis, MariaDB from
// Debian's packages). A span's shape is its kind, scope, name and attribute keys (pyroscope.profile.id
// left out); every shape is printed with its count in both runs, `≠` where they differ.
import { fixture, runCli, runNode } from '../dist/test/support/child.js';
import { startMariaDb } from '../dist/test/support/mariadb.js';
import { startPostgres } from '../dist/test/support/postgres.js';
import { OtlpSpanKind, startReceiver } from '../dist/test/support/receiver.js';
import { startRedis } from '../dist/test/support/redis.js';
import { startRowsBackend } from '../dist/test/support/rows-backend.js';

const CLIENTS = ['http', 'fetch', 'pg', 'ioredis', 'redis', 'mysql2'];
const REQUESTS = 6;
const APP = fixture('apps/pooled-clients.cjs');
const PROFILE_ID = 'pyroscope.profile.id';

const SERVERS = { http: startRowsBackend, fetch: startRowsBackend, pg: startPostgres, ioredis: startRedis, redis: startRedis, mysql2: startMariaDb };

const shapeOf = (span) =>
  `${span.kind} ${span.scope.name} ${span.name} [${Object.keys(span.attributes)
    .filter((key) => key !== PROFILE_ID)
    .sort()
    .join(',')}]`;

/** Shape → count, over the spans of REQUESTS requests. */
async function shapes(client, serverUrl, start) {
  const receiver = await startReceiver();
  try {
    const env = {
      CLIENT: client,
      DATABASE_URL: serverUrl,
      ROWS: '20',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'span-shapes',
      OTEL_NODE_RESOURCE_DETECTORS: 'env',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
      PYRO_RUN_PROFILES: 'none',
    };
    const app = start(env);
    try {
      const port = (await app.line(/listening (\d+)/))[1];
      for (let i = 0; i < REQUESTS; i++) await (await fetch(`http://127.0.0.1:${port}/work/${i}`)).text();
      // A request's other spans end before its server span, and both exporters send in the order
      // spans end: once the last server span is in, so is everything before it.
      await receiver.waitFor(() => receiver.spans.filter((span) => span.kind === OtlpSpanKind.Server).length >= REQUESTS, { timeoutMs: 20_000 });
    } finally {
      app.process.kill('SIGKILL');
      await app.exit();
    }
    const counts = new Map();
    for (const span of receiver.spans) counts.set(shapeOf(span), (counts.get(shapeOf(span)) ?? 0) + 1);
    return counts;
  } finally {
    await receiver.close();
  }
}

const clients = process.argv.slice(2);
for (const client of clients) if (!CLIENTS.includes(client)) throw new Error(`unknown client ${client}; one of ${CLIENTS.join(', ')}`);
for (const client of clients.length > 0 ? clients : CLIENTS) {
  const server = await SERVERS[client]();
  try {
    const ours = await shapes(client, server.url, (env) => runCli([APP], { env }));
    const theirs = await shapes(client, server.url, (env) => runNode(['--require', '@opentelemetry/auto-instrumentations-node/register', APP], { env }));
    console.log(`\n${client}: pyro-run | register | kind scope name [attribute keys]`);
    for (const shape of [...new Set([...ours.keys(), ...theirs.keys()])].sort()) {
      const [a, b] = [ours.get(shape) ?? 0, theirs.get(shape) ?? 0];
      console.log(`${a === b ? ' ' : '≠'} ${String(a).padStart(2)} | ${String(b).padStart(2)} | ${shape}`);
    }
  } finally {
    await server.stop();
  }
}
