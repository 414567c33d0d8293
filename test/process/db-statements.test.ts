/**
 * A statement's literals never leave the process: pg, mysql2 and Sequelize (which inlines a
 * `where` value into its SQL) queries with a user's e-mail address and an amount are written in
 * local mode and sent over OTLP with `?` in their place; PYRO_RUN_DB_STATEMENTS=raw keeps them.
 * Real PostgreSQL and MariaDB servers.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fixture, runCli } from '../support/child.js';
import { type MariaDb, startMariaDb } from '../support/mariadb.js';
import { type Postgres, startPostgres } from '../support/postgres.js';
import { readRecording } from '../support/read-recording.js';
import { type DecodedSpan, startReceiver } from '../support/receiver.js';
import { scratchDirs } from '../support/scratch.js';
import { skipUnless } from '../support/installed.js';

const { fresh: tempDir } = scratchDirs('pyro-run-db-statements-');
const skip = skipUnless('postgresql', 'mariadb');
let postgres: Postgres;
let mariadb: MariaDb;

before(async () => {
  if (skip) return;
  [postgres, mariadb] = await Promise.all([startPostgres(), startMariaDb()]);
});
after(async () => {
  await Promise.all([postgres?.stop(), mariadb?.stop()]);
});

const env = () => ({ PG_URL: postgres.url, MYSQL_URL: mariadb.url });

/** The statements of the run's database spans, by the system that ran them. */
function statements(spans: readonly DecodedSpan[]): { system: string; text: string }[] {
  return spans.flatMap((span) => {
    const text = span.attributes['db.statement'] ?? span.attributes['db.query.text'];
    return typeof text === 'string' ? [{ system: String(span.attributes['db.system'] ?? span.attributes['db.system.name']), text }] : [];
  });
}

function assertSanitized(found: readonly { system: string; text: string }[]): void {
  // The app's own SELECTs (Sequelize's sync asks the catalogue too).
  const selects = found.filter(({ text }) => /^SELECT/.test(text) && text.includes('email'));
  assert.deepEqual(selects.map(({ system, text }) => `${system}: ${text}`).sort(), [
    'mysql: SELECT ? AS email, ? AS amount',
    'postgresql: SELECT "id", "email", "createdAt", "updatedAt" FROM "Users" AS "User" WHERE "User"."email" = ?;',
    'postgresql: SELECT ? AS email, ? AS amount',
  ]);
  for (const { text } of found) assert.ok(!text.includes('jane.doe') && !text.includes('4217'), text);
}

test('local mode: the statements written have ? for their literals', { skip }, async (t) => {
  const out = tempDir();
  const app = runCli(['--out', out, '--quiet', fixture('apps/sql-literals.cjs')], { env: env() });
  t.after(() => app.process.kill('SIGKILL'));
  assert.equal((await app.exit(60_000)).code, 0, app.stderr);
  assertSanitized(statements(readRecording(out).spans));
});

test('over OTLP: the statements sent have ? for their literals', { skip }, async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const app = runCli([fixture('apps/sql-literals.cjs')], { env: { ...env(), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, PYRO_RUN_PROFILES: 'none' } });
  t.after(() => app.process.kill('SIGKILL'));
  assert.equal((await app.exit(60_000)).code, 0, app.stderr);
  assertSanitized(statements(receiver.spans));
});

test('PYRO_RUN_DB_STATEMENTS=raw sends them as recorded', { skip }, async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const app = runCli(['--db-statements', 'raw', fixture('apps/sql-literals.cjs')], {
    env: { ...env(), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, PYRO_RUN_PROFILES: 'none' },
  });
  t.after(() => app.process.kill('SIGKILL'));
  assert.equal((await app.exit(60_000)).code, 0, app.stderr);
  const raw = statements(receiver.spans).filter(({ text }) => text.includes("'jane.doe@example.com'"));
  assert.equal(raw.length, 3, JSON.stringify(statements(receiver.spans)));
});
