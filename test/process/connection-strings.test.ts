/**
 * Instrumentations that read a database's name, host and port from a connection string on every
 * pool checkout or query (pg's pool, knex) do it through one parse per connection string
 * (build/instrumentation-patches.ts): each span must still name its own connection's database,
 * host and port when two connection strings are used in turn. A real PostgreSQL server.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, runCli } from '../support/child.js';
import { skipUnless } from '../support/installed.js';
import { startPostgres } from '../support/postgres.js';
import { type DecodedSpan, startReceiver } from '../support/receiver.js';

const DATABASES = ['postgres', 'pyro_second'];
const ROUNDS = 3;

test("pg's pool and knex: each span names the database, host and port of its own connection string, two used in turn", {
  skip: skipUnless('postgresql'),
}, async (t) => {
  const postgres = await startPostgres();
  t.after(() => postgres.stop());
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const app = runCli([fixture('apps/connection-strings.cjs')], {
    env: { PG_URL: postgres.url, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, PYRO_RUN_PROFILES: 'none' },
  });
  t.after(() => app.process.kill('SIGKILL'));
  assert.equal((await app.exit(60_000)).code, 0, app.stderr);

  const { hostname, port } = new URL(postgres.url);
  const childrenOf = (root: DecodedSpan, named: (span: DecodedSpan) => boolean) =>
    receiver.spans.filter((span) => span.traceId === root.traceId && span.parentSpanId === root.spanId && named(span));
  const connection = (span: DecodedSpan) => [span.attributes['db.namespace'], span.attributes['server.address'], span.attributes['server.port']];
  for (const [client, named] of [
    ['pool', (span: DecodedSpan) => span.name === 'pg-pool.connect'],
    ['knex', (span: DecodedSpan) => span.attributes['knex.version'] !== undefined],
  ] as const) {
    for (const database of DATABASES) {
      const roots = receiver.spans.filter((span) => span.name === `${client} ${database}`);
      assert.equal(roots.length, ROUNDS, `${client} ${database}: ${receiver.spans.map((span) => span.name).join(', ')}`);
      const spans = roots.flatMap((root) => childrenOf(root, named));
      assert.equal(spans.length, ROUNDS, `${client} ${database}'s spans`);
      for (const span of spans) assert.deepEqual(connection(span), [database, hostname, Number(port)], `${client} ${database}: ${span.name}`);
    }
  }
});
