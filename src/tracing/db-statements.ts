import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { spanWith } from './span-view.js';

/**
 * Query texts with their literals replaced by `?`, as OpenTelemetry's database semantic conventions
 * recommend (`db.query.text`: "SHOULD be collected by default only if there is sanitization that
 * excludes sensitive information"): an ORM such as Sequelize inlines the app's values — users'
 * e-mail addresses, names, amounts — into the SQL it sends, and the pg, mysql2, knex, tedious and
 * oracledb instrumentations record that text whole. It is sanitized on its way out of the process
 * (each span batch sent or written), so the app's own exporters, if it has any, see its spans as
 * they are.
 */

/** The statement attributes, before and after the semantic conventions' v1.26 rename. */
export const STATEMENT_ATTRIBUTES = ['db.statement', 'db.query.text'] as const;
const SYSTEM_ATTRIBUTES = ['db.system', 'db.system.name'] as const;

/**
 * `db.system` values whose statements are SQL (or CQL, its cousin): the others (redis, mongodb,
 * memcached, elasticsearch …) record commands their instrumentations already shorten.
 */
const SQL_SYSTEMS: ReadonlySet<string> = new Set([
  'postgresql',
  'mysql',
  'mariadb',
  'mssql',
  'microsoft.sql_server',
  'oracle',
  'oracle.db',
  'sqlite',
  'cockroachdb',
  'db2',
  'ibm.db2',
  'h2',
  'hsqldb',
  'cassandra',
  'clickhouse',
  'trino',
  'spanner',
  'gcp.spanner',
  'redshift',
  'aws.redshift',
  'snowflake',
  'other_sql',
]);

const WORD_CHAR = /[\p{L}\p{N}_$@#]/u;
/** A letter, digit, `_`, `$`, `@` or `#` (any script's letters and digits); ASCII answered without the regex. */
export function isWordChar(c: string | undefined): boolean {
  if (c === undefined) return false;
  const code = c.charCodeAt(0);
  if (code >= 128) return WORD_CHAR.test(c);
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 95 || code === 36 || code === 64 || code === 35;
}
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
/** Letters that may prefix a string literal: E'…' (PostgreSQL escapes), N'…' (national), X'…', B'…'. */
const STRING_PREFIXES: ReadonlySet<string> = new Set(['e', 'n', 'x', 'b']);
const DOLLAR_TAG = /\$([A-Za-z_][A-Za-z0-9_]*)?\$/y;
const NUMBER = /0x[0-9a-f]+|(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?/iy;
const WORD = /[\p{L}\p{N}_$@#]+/uy;

/**
 * `sql` with every literal — quoted strings (with '' and \' escapes, E/N/X/B prefixes), PostgreSQL
 * dollar-quoted strings, and numbers not part of a name — replaced by `?`. Names (quoted with "…"
 * or `…` too), keywords, placeholders (`?`, `$1`, `:name`, `@p1`) and comments are kept. One pass,
 * no backtracking: linear in the text.
 */
export function sanitizeSql(sql: string): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      const to = end < 0 ? sql.length : end;
      out += sql.slice(i, to);
      i = to;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      const to = end < 0 ? sql.length : end + 2;
      out += sql.slice(i, to);
      i = to;
    } else if (c === '"' || c === '`') {
      const to = quotedEnd(sql, i, c, false);
      out += sql.slice(i, to);
      i = to;
    } else if (c === "'") {
      out += '?';
      i = quotedEnd(sql, i, c, true);
    } else if (c === '$') {
      DOLLAR_TAG.lastIndex = i;
      const tag = DOLLAR_TAG.exec(sql);
      if (tag !== null) {
        const end = sql.indexOf(tag[0], i + tag[0].length);
        out += '?';
        i = end < 0 ? sql.length : end + tag[0].length;
      } else {
        // `$1`: a placeholder, kept with its number.
        WORD.lastIndex = i + 1;
        const word = WORD.exec(sql);
        out += `$${word?.[0] ?? ''}`;
        i += 1 + (word?.[0].length ?? 0);
      }
    } else if ((isDigit(c) || (c === '.' && isDigit(sql[i + 1]))) && !isWordChar(sql[i - 1])) {
      NUMBER.lastIndex = i;
      const number = NUMBER.exec(sql)!;
      out += '?';
      i += number[0].length;
    } else if (isWordChar(c)) {
      WORD.lastIndex = i;
      const word = WORD.exec(sql)![0];
      if (word.length === 1 && STRING_PREFIXES.has(word.toLowerCase()) && sql[i + 1] === "'") {
        out += '?';
        i = quotedEnd(sql, i + 1, "'", true);
      } else {
        out += word;
        i += word.length;
      }
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Where the quoted run opened at `start` ends: past its closing quote (a doubled quote is one inside it), or the text's end. */
function quotedEnd(text: string, start: number, quote: string, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < text.length) {
    const c = text[i];
    if (backslashEscapes && c === '\\') i += 2;
    else if (c === quote) {
      if (text[i + 1] !== quote) return i + 1;
      i += 2;
    } else i++;
  }
  return text.length;
}

/** Whether a span's statement is SQL, by its `db.system`. */
function isSql(attributes: ReadableSpan['attributes']): boolean {
  return SYSTEM_ATTRIBUTES.some((name) => {
    const system = attributes[name];
    return typeof system === 'string' && SQL_SYSTEMS.has(system);
  });
}

/** Statements this long or longer are sanitized every time, not kept. */
const MEMO_LONGEST = 2_048;
/** How many sanitized statements are kept; the oldest goes first. */
const MEMO_ENTRIES = 256;
const memo = new Map<string, string>();

/**
 * sanitizeSql, remembered: an app sends the same few statements over and over (its parameters go
 * apart from the text), and a span of each has its text sanitized on the way out. Texts with the
 * app's values inlined (an ORM's) are each new: they take a place for a while, within the bound.
 */
function sanitizedOnce(sql: string): string {
  if (sql.length >= MEMO_LONGEST) return sanitizeSql(sql);
  let sanitized = memo.get(sql);
  if (sanitized === undefined) {
    sanitized = sanitizeSql(sql);
    if (memo.size >= MEMO_ENTRIES) memo.delete(memo.keys().next().value!);
    memo.set(sql, sanitized);
  }
  return sanitized;
}

/**
 * The span as it is sent: when it records an SQL statement, a view of it whose attributes hold the
 * sanitized text (the span itself, which the app's own processors may hold, is left as it is);
 * else the span itself.
 */
export function withSanitizedStatement(span: ReadableSpan): ReadableSpan {
  const { attributes } = span;
  if (!STATEMENT_ATTRIBUTES.some((name) => typeof attributes[name] === 'string') || !isSql(attributes)) return span;
  const sanitized = { ...attributes };
  for (const name of STATEMENT_ATTRIBUTES) {
    const text = attributes[name];
    if (typeof text === 'string') sanitized[name] = sanitizedOnce(text);
  }
  return spanWith(span, { attributes: sanitized });
}
