/**
 * The Pyroscope `/ingest` request as tables: the `name` we build is read back with the faithful
 * port of the server's parsers (Go's query parsing, then labelset.Parse), so an escaping mistake
 * shows up as the 400 or the mangled label the real server would produce.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readConfig, type Config } from '../../src/config/index.js';
import {
  authHeaders,
  ingestName,
  ingestRequest,
  sanitizeAppName,
  sanitizeLabelValue,
  serviceNameLabel,
  type IngestInput,
} from '../../src/export/pyroscope/ingest-request.js';
import { basicAuthOf } from '../support/basic-auth.js';
import { goQueryGet, parseGoQuery } from '../support/go-query.js';
import { ingestedLabels, parseName, type ParsedName } from '../support/pyroscope-name.js';
import { parseAtTime } from '../support/pyroscope-time.js';

const FROM = 1_700_000_000_123;
const UNTIL = 1_700_000_015_123;

function input(over: Partial<IngestInput> = {}): IngestInput {
  return {
    serverAddress: 'http://pyroscope:4040',
    serviceName: 'checkout',
    labels: {},
    headers: {},
    from: FROM,
    until: UNTIL,
    body: new Uint8Array([0x1f, 0x8b, 1, 2, 3]),
    what: 'cpu profile',
    ...over,
  };
}

/** What the server reads from our URL: Go's r.URL.Query(), then labelset.Parse of `name`. */
function serverView(url: string): { query: Map<string, string[]>; parsed: ParsedName } {
  const query = parseGoQuery(new URL(url).search.slice(1));
  return { query, parsed: parseName(goQueryGet(query, 'name')) };
}

function serverParse(serviceName: string, labels: Record<string, string>): ParsedName {
  return serverView(ingestRequest(input({ serviceName, labels })).url).parsed;
}

describe('ingestName: syntax the server parses', () => {
  const cases: { name: string; service: string; labels: Record<string, string>; wire: string; parsed: ParsedName }[] = [
    { name: 'no labels', service: 'checkout', labels: {}, wire: 'checkout{}', parsed: { serviceName: 'checkout', labels: {} } },
    {
      name: 'keys sorted',
      service: 'checkout',
      labels: { z: '1', a: '2', m: '3', A: '4', _b: '5' },
      wire: 'checkout{A=4,_b=5,a=2,m=3,z=1}',
      parsed: { serviceName: 'checkout', labels: { A: '4', _b: '5', a: '2', m: '3', z: '1' } },
    },
    {
      name: 'keys with illegal characters or the reserved __ prefix are dropped',
      service: 'checkout',
      labels: { 'a-b': 'x', 'a b': 'x', é: 'x', '': 'x', 'a}': 'x', __name__: 'evil', __session_id__: 's', __x: 'y', ok: '1', 'dotted.key_1': '2' },
      wire: 'checkout{dotted.key_1=2,ok=1}',
      parsed: { serviceName: 'checkout', labels: { 'dotted.key_1': '2', ok: '1' } },
    },
    {
      name: 'values with the parser’s separators',
      service: 'checkout',
      labels: { a: 'x{y}z', b: 'p,q', c: 'k=v', d: '}', e: '{' },
      wire: 'checkout{a=x_y_z,b=p_q,c=k_v,d=_,e=_}',
      parsed: { serviceName: 'checkout', labels: { a: 'x_y_z', b: 'p_q', c: 'k_v', d: '_', e: '_' } },
    },
    {
      name: 'values with whitespace, quotes and backslashes',
      service: 'checkout',
      labels: { a: ' padded ', b: 'tab\there', c: 'line\nbreak', d: '"q"', e: 'C:\\dir' },
      wire: 'checkout{a=_padded_,b=tab_here,c=line_break,d=_q_,e=C:_dir}',
      parsed: { serviceName: 'checkout', labels: { a: '_padded_', b: 'tab_here', c: 'line_break', d: '_q_', e: 'C:_dir' } },
    },
    {
      name: 'an HTTP route as span name keeps its slashes and colons',
      service: 'checkout',
      labels: { span_name: 'GET /users/:id' },
      wire: 'checkout{span_name=GET_/users/:id}',
      parsed: { serviceName: 'checkout', labels: { span_name: 'GET_/users/:id' } },
    },
    {
      name: 'unicode values survive',
      service: 'checkout',
      labels: { city: 'Zürich', tokyo: '東京', emoji: '🚀' },
      wire: 'checkout{city=Zürich,emoji=🚀,tokyo=東京}',
      parsed: { serviceName: 'checkout', labels: { city: 'Zürich', emoji: '🚀', tokyo: '東京' } },
    },
    {
      name: 'characters Go’s query parser would choke on unencoded (;, %, &, +, #)',
      service: 'checkout',
      labels: { a: 'x;y', b: '100%', c: 'p&q', d: 'a+b', e: '#frag' },
      wire: 'checkout{a=x;y,b=100%,c=p&q,d=a+b,e=#frag}',
      parsed: { serviceName: 'checkout', labels: { a: 'x;y', b: '100%', c: 'p&q', d: 'a+b', e: '#frag' } },
    },
    {
      name: 'very long values are cut to 256',
      service: 'checkout',
      labels: { long: 'v'.repeat(300) },
      wire: `checkout{long=${'v'.repeat(256)}}`,
      parsed: { serviceName: 'checkout', labels: { long: 'v'.repeat(256) } },
    },
    {
      name: 'service name with illegal characters',
      service: 'my service!',
      labels: { a: '1' },
      wire: 'my_service_{a=1,service_name=my service!}',
      parsed: { serviceName: 'my_service_', labels: { a: '1', service_name: 'my service!' } },
    },
    {
      name: 'non-ASCII service name',
      service: 'café',
      labels: {},
      wire: 'caf_{service_name=café}',
      parsed: { serviceName: 'caf_', labels: { service_name: 'café' } },
    },
    {
      name: 'a scoped package name travels exactly as the service_name label',
      service: '@acme/web-api_v2.1',
      labels: { region: 'eu' },
      wire: '_acme/web-api_v2.1{region=eu,service_name=@acme/web-api_v2.1}',
      parsed: { serviceName: '_acme/web-api_v2.1', labels: { region: 'eu', service_name: '@acme/web-api_v2.1' } },
    },
    {
      name: 'a service name the label parser would split is only sanitized',
      service: 'a{b=c}',
      labels: {},
      wire: 'a_b_c_{}',
      parsed: { serviceName: 'a_b_c_', labels: {} },
    },
    { name: 'a service name with a comma is only sanitized', service: 'a,b', labels: {}, wire: 'a_b{}', parsed: { serviceName: 'a_b', labels: {} } },
    { name: 'a service name with surrounding spaces is only sanitized', service: ' a ', labels: {}, wire: '_a_{}', parsed: { serviceName: '_a_', labels: {} } },
    { name: 'empty service name', service: '', labels: {}, wire: 'unknown_service{}', parsed: { serviceName: 'unknown_service', labels: {} } },
    {
      name: 'a long service name: the app name is cut to 256, the label keeps it whole',
      service: 's'.repeat(300),
      labels: {},
      wire: `${'s'.repeat(256)}{service_name=${'s'.repeat(300)}}`,
      parsed: { serviceName: 's'.repeat(256), labels: { service_name: 's'.repeat(300) } },
    },
    {
      name: 'a service name over the label value limit is only cut',
      service: 'é'.repeat(1100),
      labels: {},
      wire: `${'_'.repeat(256)}{}`,
      parsed: { serviceName: '_'.repeat(256), labels: {} },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(ingestName(c.service, c.labels, serviceNameLabel(c.service)), c.wire);
      const parsed = serverParse(c.service, c.labels);
      assert.deepEqual(parsed, c.parsed);
      assert.deepEqual(ingestedLabels(parsed.labels), parsed.labels, 'no label is dropped at ingestion');
    });
  }

  it('a request carrying the service_name label falls back to the app name alone, for servers before 1.13', () => {
    const request = ingestRequest(input({ serviceName: '@acme/checkout', labels: { env: 'prod' } }));
    assert.deepEqual(serverView(request.url).parsed, { serviceName: '_acme/checkout', labels: { env: 'prod', service_name: '@acme/checkout' } });
    assert.ok(request.fallback, 'a fallback form');
    assert.deepEqual(serverView(request.fallback.request.url).parsed, { serviceName: '_acme/checkout', labels: { env: 'prod' } });
    const { fallback, ...primary } = request;
    assert.deepEqual({ ...fallback.request, url: '' }, { ...primary, url: '' }, 'only the name differs');
    assert.match(fallback.note, /"@acme\/checkout" are filed as "_acme\/checkout"/);
    assert.equal(ingestRequest(input({ serviceName: 'checkout' })).fallback, undefined, 'a name Pyroscope takes needs none');
  });

  it('a service name with ":" (OTel style unknown_service:node) is made acceptable to the server', () => {
    assert.equal(sanitizeAppName('unknown_service:node'), 'unknown_service_node');
    assert.deepEqual(serverParse('unknown_service:node', { span_name: 'x' }), {
      serviceName: 'unknown_service_node',
      labels: { service_name: 'unknown_service:node', span_name: 'x' },
    });
  });

  it('the default service name of readConfig is accepted as is', () => {
    assert.deepEqual(serverParse(readConfig({}).config.serviceName, {}), { serviceName: 'unknown_service', labels: {} });
  });

  // Whatever a label value holds, the server must read back exactly the value we meant to send:
  // no split at a separator, no trim, nothing lost to query decoding.
  const nasty = [
    '}',
    '{',
    ',',
    '=',
    ' ',
    '\t\n\r',
    'a}b,c=d{e',
    'k=v,k2=v2}',
    '  leading and trailing  ',
    '\u00a0nbsp\u2003em',
    '%41%zz',
    'x'.repeat(1000),
    'ü'.repeat(300),
    'null\u0000byte',
  ];
  for (const value of nasty) {
    it(`value ${JSON.stringify(value.length > 40 ? `${value.slice(0, 20)}…(${value.length})` : value)} reads back as sent`, () => {
      const sent = sanitizeLabelValue(value);
      assert.ok(sent.length <= 256);
      const parsed = serverParse('svc', { k: value, z: 'last' });
      assert.deepEqual(parsed, { serviceName: 'svc', labels: { k: sent, z: 'last' } });
    });
  }

  it('a value cut in the middle of a surrogate pair still reads back as sent', () => {
    const value = `x${'😀'.repeat(200)}`;
    const parsed = serverParse('svc', { k: value });
    assert.equal(parsed.labels.k, sanitizeLabelValue(value));
  });
});

describe('sanitizers on their own', () => {
  const appNames: [string, string][] = [
    ['checkout', 'checkout'],
    ['a.b-c_d/e', 'a.b-c_d/e'],
    ['with space', 'with_space'],
    ['x{y}', 'x_y_'],
    ['host:port', 'host_port'],
    ['', 'unknown_service'],
  ];
  for (const [raw, expected] of appNames) it(`sanitizeAppName(${JSON.stringify(raw)})`, () => assert.equal(sanitizeAppName(raw), expected));

  const values: [string, string][] = [
    ['plain', 'plain'],
    ['a b', 'a_b'],
    ['{x=y,z}', '_x_y_z_'],
    ['"\\', '__'],
    ['', ''],
  ];
  for (const [raw, expected] of values) it(`sanitizeLabelValue(${JSON.stringify(raw)})`, () => assert.equal(sanitizeLabelValue(raw), expected));
});

describe('authHeaders', () => {
  const base: Config['pyroscope'] = {
    serverAddress: 'http://pyroscope:4040',
    authToken: undefined,
    basicAuthUser: undefined,
    basicAuthPassword: undefined,
    tenantId: undefined,
    headers: {},
    labels: {},
    uploadTimeoutMs: 10_000,
    spoolDir: undefined,
  };
  const cases: { name: string; pyroscope: Partial<Config['pyroscope']>; expected: Record<string, string> }[] = [
    { name: 'nothing configured', pyroscope: {}, expected: {} },
    { name: 'extra headers only', pyroscope: { headers: { 'x-custom': 'a b' } }, expected: { 'x-custom': 'a b' } },
    { name: 'bearer token', pyroscope: { authToken: 'glc_abc' }, expected: { authorization: 'Bearer glc_abc' } },
    { name: 'basic auth is base64 of user:password', pyroscope: { basicAuthUser: 'u', basicAuthPassword: 'p' }, expected: { authorization: 'Basic dTpw' } },
    { name: 'tenant', pyroscope: { tenantId: 'team-a' }, expected: { 'x-scope-orgid': 'team-a' } },
    {
      name: 'token wins over basic auth',
      pyroscope: { authToken: 'tok', basicAuthUser: 'u', basicAuthPassword: 'p' },
      expected: { authorization: 'Bearer tok' },
    },
    { name: 'user without password sends no authorization', pyroscope: { basicAuthUser: 'u' }, expected: {} },
    {
      name: 'everything together',
      pyroscope: { basicAuthUser: '123456', basicAuthPassword: 'pw', tenantId: 't1', headers: { 'x-extra': '1' } },
      expected: { 'x-extra': '1', authorization: `Basic ${Buffer.from('123456:pw').toString('base64')}`, 'x-scope-orgid': 't1' },
    },
    {
      name: 'configured credentials override same-named extra headers',
      pyroscope: { authToken: 'tok', tenantId: 't1', headers: { authorization: 'Bearer other', 'x-scope-orgid': 'other' } },
      expected: { authorization: 'Bearer tok', 'x-scope-orgid': 't1' },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const pyroscope = { ...base, ...c.pyroscope };
      const before = JSON.stringify(pyroscope.headers);
      assert.deepEqual(authHeaders(pyroscope), c.expected);
      assert.equal(JSON.stringify(pyroscope.headers), before, 'the configured headers are not modified');
    });
  }

  it('basic credentials with a colon and non-ASCII decode back exactly', () => {
    const headers = authHeaders({ ...base, basicAuthUser: '123456', basicAuthPassword: 'glc:päss wörd==' });
    assert.deepEqual(basicAuthOf({ authorization: headers.authorization }), { username: '123456', password: 'glc:päss wörd==' });
  });
});

describe('ingestRequest', () => {
  it('posts to <server>/ingest with the pprof query the server expects', () => {
    const body = new Uint8Array([1, 2, 3]);
    const request = ingestRequest(input({ body, labels: { env: 'prod' }, what: 'wall profile 12:00' }));
    const url = new URL(request.url);
    assert.equal(`${url.origin}${url.pathname}`, 'http://pyroscope:4040/ingest');
    const { query, parsed } = serverView(request.url);
    assert.equal(goQueryGet(query, 'format'), 'pprof');
    assert.equal(goQueryGet(query, 'spyName'), 'nodespy');
    assert.deepEqual(parsed, { serviceName: 'checkout', labels: { env: 'prod' } });
    assert.equal(request.kind, 'profiles');
    assert.equal(request.body, body);
    assert.equal(request.what, 'wall profile 12:00');
    assert.equal(request.headers['content-type'], 'application/octet-stream');
  });

  it('keeps a path prefix of the server address', () => {
    assert.equal(new URL(ingestRequest(input({ serverAddress: 'https://gw.example/pyroscope' })).url).pathname, '/pyroscope/ingest');
  });

  const times: { name: string; from: number; until: number; fromText: string; untilText: string }[] = [
    { name: 'whole milliseconds', from: FROM, until: UNTIL, fromText: '1700000000123', untilText: '1700000015123' },
    {
      name: 'fractions widen the window (from floored, until ceiled)',
      from: FROM + 0.7,
      until: UNTIL + 0.2,
      fromText: '1700000000123',
      untilText: '1700000015124',
    },
  ];
  for (const t of times) {
    it(`from/until are 13-digit epoch ms: ${t.name}`, () => {
      const { query } = serverView(ingestRequest(input({ from: t.from, until: t.until })).url);
      const from = goQueryGet(query, 'from');
      const until = goQueryGet(query, 'until');
      assert.equal(from, t.fromText);
      assert.equal(until, t.untilText);
      assert.match(from, /^\d{13}$/);
      assert.match(until, /^\d{13}$/);
      // The server picks the unit by digit count: 13 digits must read as milliseconds.
      assert.equal(parseAtTime(from, 0), Number(t.fromText));
      assert.equal(parseAtTime(until, 0), Number(t.untilText));
    });
  }

  it('sends the given headers next to the content type', () => {
    const request = ingestRequest(input({ headers: { authorization: 'Bearer t', 'x-scope-orgid': 'a' } }));
    assert.deepEqual(request.headers, { 'content-type': 'application/octet-stream', authorization: 'Bearer t', 'x-scope-orgid': 'a' });
  });
});
