/**
 * SQL statements leave the process with their literals as `?` (OpenTelemetry's database semantic
 * conventions): what an ORM inlines — e-mail addresses, names, amounts — never reaches a disk or a
 * backend. Names, keywords, placeholders and comments are kept, so the statement still says what ran.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { isWordChar, sanitizeSql, withSanitizedStatement } from '../../src/tracing/db-statements.js';

const CASES: readonly [rule: string, sql: string, sanitized: string][] = [
  ['a string literal', "SELECT * FROM users WHERE email = 'jane@example.com'", 'SELECT * FROM users WHERE email = ?'],
  ['a doubled quote stays inside the literal', "INSERT INTO t (name) VALUES ('O''Brien')", 'INSERT INTO t (name) VALUES (?)'],
  ['a backslash-escaped quote (MySQL) stays inside it', "UPDATE t SET note = 'it\\'s' WHERE id = 7", 'UPDATE t SET note = ? WHERE id = ?'],
  ['numbers, decimals, exponents, hex', 'SELECT 1, 2.50, .5, 1e10, 0xFF FROM t LIMIT 10 OFFSET 20', 'SELECT ?, ?, ?, ?, ? FROM t LIMIT ? OFFSET ?'],
  ['a negative number keeps its sign as an operator', 'SELECT * FROM t WHERE x > -5', 'SELECT * FROM t WHERE x > -?'],
  ['IN lists', "SELECT * FROM t WHERE id IN (1, 2, 3) AND tag IN ('a', 'b')", 'SELECT * FROM t WHERE id IN (?, ?, ?) AND tag IN (?, ?)'],
  [
    'digits inside names are names',
    'SELECT col1, t2.x FROM table_2 t2 JOIN "Table 3" USING (k9)',
    'SELECT col1, t2.x FROM table_2 t2 JOIN "Table 3" USING (k9)',
  ],
  ['quoted names with literal-looking text are kept', 'SELECT "it\'s 5", `a 1` FROM t', 'SELECT "it\'s 5", `a 1` FROM t'],
  [
    'placeholders are kept',
    'SELECT * FROM t WHERE a = $1 AND b = ? AND c = :name AND d = @p1',
    'SELECT * FROM t WHERE a = $1 AND b = ? AND c = :name AND d = @p1',
  ],
  ['PostgreSQL prefixed strings', "SELECT E'a\\nb', N'x', X'0A', B'101'", 'SELECT ?, ?, ?, ?'],
  ['PostgreSQL dollar-quoted strings', "SELECT $$it's 42$$, $tag$secret $$ text$tag$", 'SELECT ?, ?'],
  ['booleans and NULL are keywords', 'UPDATE t SET a = TRUE, b = NULL', 'UPDATE t SET a = TRUE, b = NULL'],
  ['casts keep their type', "SELECT '2024-01-01'::date, x::int4", 'SELECT ?::date, x::int4'],
  ['comments are kept', "SELECT 1 -- the answer\n/* tag='x' */ FROM t", "SELECT ? -- the answer\n/* tag='x' */ FROM t"],
  ['an unterminated literal is cut at its start', "SELECT 'no end", 'SELECT ?'],
  ['a statement without literals is itself', 'SELECT id, name FROM users ORDER BY name', 'SELECT id, name FROM users ORDER BY name'],
];

describe('sanitizeSql', () => {
  for (const [rule, sql, sanitized] of CASES) {
    it(rule, () => assert.equal(sanitizeSql(sql), sanitized));
  }
  it('reads a name character as Unicode does: every UTF-16 code unit answered as the letter-digit-_$@# rule answers it', () => {
    const rule = /[\p{L}\p{N}_$@#]/u;
    for (let code = 0; code < 0x10000; code++) {
      const c = String.fromCharCode(code);
      if (isWordChar(c) !== rule.test(c)) assert.fail(`U+${code.toString(16)}: ${isWordChar(c)}`);
    }
  });
  it('is linear: a long statement of many literals takes no time to speak of', () => {
    const sql = `INSERT INTO t VALUES ${Array.from({ length: 20_000 }, (_, i) => `(${i}, 'user${i}@example.com')`).join(', ')}`;
    const out = sanitizeSql(sql);
    assert.equal(out, `INSERT INTO t VALUES ${Array.from({ length: 20_000 }, () => '(?, ?)').join(', ')}`);
  });
});

const spanOf = (attributes: Record<string, unknown>) =>
  ({
    name: 'pg.query:SELECT shop',
    attributes,
    spanContext(this: { name: string }) {
      return { spanId: this.name };
    },
  }) as unknown as ReadableSpan;

describe('withSanitizedStatement', () => {
  it("an SQL span goes with its statement sanitized, in both conventions' attributes; the span itself is left as it is", () => {
    const attributes = { 'db.system': 'postgresql', 'db.statement': "SELECT 'a'", 'db.query.text': 'SELECT 42', 'db.name': 'shop' };
    const span = spanOf(attributes);
    const sent = withSanitizedStatement(span);
    assert.deepEqual(sent.attributes, { 'db.system': 'postgresql', 'db.statement': 'SELECT ?', 'db.query.text': 'SELECT ?', 'db.name': 'shop' });
    assert.equal(span.attributes['db.statement'], "SELECT 'a'", 'the app’s span is unchanged');
    assert.equal(sent.name, span.name);
    assert.deepEqual(sent.spanContext(), { spanId: 'pg.query:SELECT shop' }, 'its span context is the span’s');
  });
  it('a statement sent again goes sanitized again, and so does each of many different ones', () => {
    const sent = (text: string) => withSanitizedStatement(spanOf({ 'db.system': 'postgresql', 'db.statement': text })).attributes['db.statement'];
    for (let round = 0; round < 2; round++) assert.equal(sent("SELECT * FROM t WHERE a = 'x'"), 'SELECT * FROM t WHERE a = ?');
    for (let i = 0; i < 1_000; i++) assert.equal(sent(`SELECT * FROM t WHERE a = 'user${i}'`), 'SELECT * FROM t WHERE a = ?');
    assert.equal(sent("SELECT * FROM t WHERE a = 'x'"), 'SELECT * FROM t WHERE a = ?');
  });
  it('the newer db.system.name is read too', () => {
    assert.equal(withSanitizedStatement(spanOf({ 'db.system.name': 'mysql', 'db.query.text': "SELECT 'x'" })).attributes['db.query.text'], 'SELECT ?');
  });
  it('a non-SQL statement (redis, mongodb) and a span without one go as they are', () => {
    for (const attributes of [{ 'db.system': 'redis', 'db.statement': 'SET key ?' }, { 'http.route': '/x' }]) {
      const span = spanOf(attributes);
      assert.equal(withSanitizedStatement(span), span);
    }
  });
});
