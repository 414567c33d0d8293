/**
 * The logger's redactor as a table: each row is a line pyro-run might print, with the secrets it
 * knows about (the values of secret settings), and what may reach the terminal.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readConfig } from '../../src/config/index.js';
import { Logger } from '../../src/log.js';
import { createRedactor } from '../../src/util/redact.js';
import { secretValues } from '../../src/agent/start.js';

const M = '[redacted]';

describe('createRedactor', () => {
  const cases: { name: string; secrets: (string | undefined)[]; text: string; expected: string }[] = [
    {
      name: 'a secret value anywhere in the text',
      secrets: ['glc_s3cr3t'],
      text: 'upload failed for token glc_s3cr3t (401)',
      expected: `upload failed for token ${M} (401)`,
    },
    { name: 'every occurrence', secrets: ['glc_s3cr3t'], text: 'glc_s3cr3t,glc_s3cr3t;xglc_s3cr3tx', expected: `${M},${M};x${M}x` },
    { name: 'several secrets', secrets: ['token-aaaa', 'pass-bbbb'], text: 'a=token-aaaa b=pass-bbbb', expected: `a=${M} b=${M}` },
    {
      name: 'a secret that contains another is masked whole (longest first)',
      secrets: ['abcd', 'abcdefgh'],
      text: 'key abcdefgh and abcd',
      expected: `key ${M} and ${M}`,
    },
    { name: 'same, listed the other way round', secrets: ['abcdefgh', 'abcd'], text: 'key abcdefgh', expected: `key ${M}` },
    { name: 'secrets with regex characters are matched literally', secrets: ['a.b*c+(d)'], text: 'x a.b*c+(d) axbbbc(d)', expected: `x ${M} axbbbc(d)` },
    { name: 'values shorter than 4 characters are ignored', secrets: ['abc', 'on', ''], text: 'abc on a cabbage', expected: 'abc on a cabbage' },
    { name: 'a 4-character value is masked', secrets: ['abcd'], text: 'xabcdx', expected: `x${M}x` },
    { name: 'undefined secrets are skipped', secrets: [undefined, 'real-secret'], text: 'real-secret undefined', expected: `${M} undefined` },
    { name: 'URL userinfo', secrets: [], text: 'POST https://user:pass@host/x failed', expected: `POST https://${M}@host/x failed` },
    { name: 'URL user without password', secrets: [], text: 'http://12345@pyro.example:4040/ingest', expected: `http://${M}@pyro.example:4040/ingest` },
    { name: 'userinfo of every URL in the line', secrets: [], text: 'a http://u:p@h1 b grpc://x:y@h2/z', expected: `a http://${M}@h1 b grpc://${M}@h2/z` },
    { name: 'Authorization: Bearer', secrets: [], text: 'Authorization: Bearer xyz', expected: `Authorization: ${M}` },
    { name: 'authorization=Basic', secrets: [], text: 'authorization=Basic abc', expected: `authorization=${M}` },
    { name: 'scheme in lower case', secrets: [], text: 'authorization: bearer xyz.abc', expected: `authorization: ${M}` },
    { name: 'header value without a scheme (the rest of the line goes with it)', secrets: [], text: 'x-api-key: k-123 next', expected: `x-api-key: ${M}` },
    { name: 'Authorization: Token', secrets: [], text: 'Authorization: Token abc123', expected: `Authorization: ${M}` },
    { name: 'Authorization: Digest with parameters', secrets: [], text: 'authorization: Digest username=u', expected: `authorization: ${M}` },
    { name: 'a password containing @', secrets: [], text: 'https://user:p@ss@host/x', expected: `https://${M}@host/x` },
    { name: 'proxy-authorization', secrets: [], text: 'Proxy-Authorization: Basic dTpw', expected: `Proxy-Authorization: ${M}` },
    { name: 'inside JSON', secrets: [], text: '{"authorization":"Bearer xyz","other":"v"}', expected: `{"authorization":"${M}","other":"v"}` },
    {
      name: 'inside util.inspect output',
      secrets: [],
      text: "{ authorization: 'Basic dTpw', 'x-scope-orgid': 't1' }",
      expected: `{ authorization: '${M}', 'x-scope-orgid': 't1' }`,
    },
    { name: 'a header list value', secrets: [], text: 'headers authorization=Bearer%20abc,x=1', expected: `headers authorization=${M},x=1` },
    // Secret values as they show up elsewhere: encoded into a URL, decoded from one, without their scheme.
    { name: 'a secret URL-encoded', secrets: ['p@ss w/rd+1'], text: 'https://h/x?q=p%40ss%20w%2Frd%2B1', expected: `https://h/x?q=${M}` },
    { name: 'a secret form-encoded (space as +)', secrets: ['p@ss w/rd'], text: 'body pw=p%40ss+w%2Frd', expected: `body pw=${M}` },
    {
      name: 'a percent-encoded secret (a raw header list) decoded',
      secrets: ['authorization=Bearer%20tok-1234'],
      text: 'sent authorization=Bearer tok-1234',
      expected: `sent ${M}`,
    },
    {
      name: 'a bearer token without its scheme',
      secrets: ['Bearer tok-1234'],
      text: 'backend said: invalid token tok-1234',
      expected: `backend said: invalid token ${M}`,
    },
    { name: 'basic credentials without the scheme', secrets: ['Basic dXNlcjpwYXNz'], text: 'rejected dXNlcjpwYXNz', expected: `rejected ${M}` },
    { name: 'a scheme whose credential is too short keeps its short part', secrets: ['Bearer abc'], text: 'Bearer abc and abc', expected: `${M} and abc` },
    // Query parameters that carry credentials, whatever the value.
    {
      name: 'token in a query',
      secrets: [],
      text: 'POST https://h/v1/traces?token=abc123&x=1 failed',
      expected: `POST https://h/v1/traces?token=${M}&x=1 failed`,
    },
    { name: 'access_token after another parameter', secrets: [], text: 'https://h/x?a=1&access_token=ya29.abc', expected: `https://h/x?a=1&access_token=${M}` },
    { name: 'api_key, apikey and key', secrets: [], text: 'http://h/x?api_key=k1&apikey=k2&key=k3', expected: `http://h/x?api_key=${M}&apikey=${M}&key=${M}` },
    {
      name: 'password, pwd and secret',
      secrets: [],
      text: 'http://h/x?password=a&pwd=b&client_secret=c',
      expected: `http://h/x?password=${M}&pwd=${M}&client_secret=${M}`,
    },
    {
      name: 'auth and a signature (S3-style presigned URL)',
      secrets: [],
      text: 'https://b.s3/o?X-Amz-Credential=AKIA%2F1&X-Amz-Signature=f00d&auth=z',
      expected: `https://b.s3/o?X-Amz-Credential=${M}&X-Amz-Signature=${M}&auth=${M}`,
    },
    { name: 'sig and a session id', secrets: [], text: 'https://h/x?sig=abc&sessionid=42', expected: `https://h/x?sig=${M}&sessionid=${M}` },
    { name: 'parameter names in any case', secrets: [], text: 'https://h/x?API_KEY=abc&Token=def', expected: `https://h/x?API_KEY=${M}&Token=${M}` },
    { name: 'a token in the fragment', secrets: [], text: 'https://h/cb#access_token=abc&type=bearer', expected: `https://h/cb#access_token=${M}&type=bearer` },
    { name: 'the value ends at a quote', secrets: [], text: '{"url":"https://h/x?token=abc","ok":1}', expected: `{"url":"https://h/x?token=${M}","ok":1}` },
    { name: 'userinfo and a query secret in one URL', secrets: [], text: 'https://u:p@h/x?secret=s1', expected: `https://${M}@h/x?secret=${M}` },
    { name: 'an empty secret parameter is left alone', secrets: [], text: 'https://h/x?token=&x=1', expected: 'https://h/x?token=&x=1' },
    {
      name: 'the words alone, outside a query, are unchanged',
      secrets: [],
      text: 'token expired; check the key and the password settings',
      expected: 'token expired; check the key and the password settings',
    },
    { name: 'text without secrets is unchanged', secrets: ['glc_s3cr3t'], text: 'GET /users/42 200 in 5ms', expected: 'GET /users/42 200 in 5ms' },
    {
      name: 'URLs without userinfo are unchanged',
      secrets: [],
      text: 'sending to http://pyroscope:4040/ingest?name=app{}&from=1 and https://otlp.example/v1/traces',
      expected: 'sending to http://pyroscope:4040/ingest?name=app{}&from=1 and https://otlp.example/v1/traces',
    },
    {
      name: 'the word authorization in prose is unchanged',
      secrets: [],
      text: 'Authorization header missing; check PYROSCOPE_AUTH_TOKEN',
      expected: 'Authorization header missing; check PYROSCOPE_AUTH_TOKEN',
    },
    { name: 'empty text', secrets: ['glc_s3cr3t'], text: '', expected: '' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(createRedactor(c.secrets)(c.text), c.expected);
    });
  }

  it('accepts any iterable and can be reused', () => {
    const redact = createRedactor(new Set(['first-secret', 'second-secret']));
    assert.equal(redact('first-secret'), M);
    assert.equal(redact('second-secret'), M);
    assert.equal(redact('third'), 'third');
  });
});

describe('secretValues: what the preload hands the redactor', () => {
  const redactorOf = (env: Record<string, string>) => createRedactor(secretValues(env, readConfig(env).config));
  const cases: { name: string; env: Record<string, string>; message: string; secret: string }[] = [
    {
      name: 'a password in the Pyroscope URL, seen alone',
      env: { PYROSCOPE_SERVER_ADDRESS: 'https://tenant:s3cr3t-pw%21@pyro.example' },
      message: 'auth failed for s3cr3t-pw!',
      secret: 's3cr3t-pw!',
    },
    {
      name: 'a password in the OTLP endpoint URL, seen alone',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://u:otlp-pass-123@collector.example' },
      message: 'rejected otlp-pass-123',
      secret: 'otlp-pass-123',
    },
    {
      name: 'the basic-auth password',
      env: { PYROSCOPE_SERVER_ADDRESS: 'https://p.example', PYROSCOPE_BASIC_AUTH_USER: 'u', PYROSCOPE_BASIC_AUTH_PASSWORD: 'basic-pw-4567' },
      message: 'pw basic-pw-4567',
      secret: 'basic-pw-4567',
    },
    // A backend's error body echoing what it got, in a form no header pattern catches.
    {
      name: 'the basic-auth credential as sent, base64 of user:password',
      env: { PYROSCOPE_SERVER_ADDRESS: 'https://p.example', PYROSCOPE_BASIC_AUTH_USER: '123456', PYROSCOPE_BASIC_AUTH_PASSWORD: 'glc_token-xyz' },
      message: 'server said: {"error":"denied","auth=Basic MTIzNDU2OmdsY190b2tlbi14eXo="}',
      secret: 'MTIzNDU2OmdsY190b2tlbi14eXo=',
    },
    {
      name: "the Basic credential made of a URL's userinfo",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://user:pa%40ss-9999@collector.example' },
      message: 'echo: got Basic dXNlcjpwYUBzcy05OTk5 from you',
      secret: 'dXNlcjpwYUBzcy05OTk5',
    },
    // Proxy credentials (HTTPS_PROXY=http://user:pass@proxy:3128) go out as Proxy-Authorization: Basic.
    {
      name: 'a proxy password, seen alone',
      env: { HTTPS_PROXY: 'http://user:proxy-pw-1234@proxy.corp:3128' },
      message: 'proxy refused proxy-pw-1234',
      secret: 'proxy-pw-1234',
    },
    {
      name: 'a URL-encoded proxy password, seen decoded',
      env: { HTTP_PROXY: 'http://user:pr%40xy-pw-77@proxy.corp:3128' },
      message: 'got pr@xy-pw-77',
      secret: 'pr@xy-pw-77',
    },
    {
      name: 'a proxy password, seen URL-encoded',
      env: { HTTP_PROXY: 'http://user:pr%40xy-pw-77@proxy.corp:3128' },
      message: 'got pr%40xy-pw-77',
      secret: 'pr%40xy-pw-77',
    },
    {
      name: 'the Proxy-Authorization credential as sent, base64 of user:password',
      env: { https_proxy: 'http://proxyuser:proxy-pw-1234@proxy.corp:3128' },
      message: 'proxy said: denied cHJveHl1c2VyOnByb3h5LXB3LTEyMzQ=',
      secret: 'cHJveHl1c2VyOnByb3h5LXB3LTEyMzQ=',
    },
    {
      name: 'the password of a scheme-less proxy value',
      env: { HTTPS_PROXY: 'user:bare-pw-5678@proxy.corp:3128' },
      message: 'bare-pw-5678 rejected',
      secret: 'bare-pw-5678',
    },
    {
      name: 'the password of a proxy variable shadowed by its lower-case form',
      env: { http_proxy: 'http://proxy.corp:3128', HTTP_PROXY: 'http://u:shadowed-pw-42@old.corp:3128' },
      message: 'shadowed-pw-42',
      secret: 'shadowed-pw-42',
    },
    // Each signal's own headers, under any header name, as a gateway echoes them back (JSON).
    ...(['TRACES', 'METRICS', 'LOGS', 'PROFILES'] as const).flatMap((signal) => [
      {
        name: `a header value of OTEL_EXPORTER_OTLP_${signal}_HEADERS, echoed by a gateway`,
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example',
          [`OTEL_EXPORTER_OTLP_${signal}_HEADERS`]: `x-honeycomb-team=hc-${signal.toLowerCase()}-key-0042,x-other=plain`,
        },
        message: `upload rejected (401 {"headers":{"x-honeycomb-team":"hc-${signal.toLowerCase()}-key-0042"}})`,
        secret: `hc-${signal.toLowerCase()}-key-0042`,
      },
      {
        name: `a URL-encoded header value of OTEL_EXPORTER_OTLP_${signal}_HEADERS, seen decoded`,
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example', [`OTEL_EXPORTER_OTLP_${signal}_HEADERS`]: `api-key=k%3D${signal.toLowerCase()}%2F77` },
        message: `denied: k=${signal.toLowerCase()}/77`,
        secret: `k=${signal.toLowerCase()}/77`,
      },
      {
        name: `a password in OTEL_EXPORTER_OTLP_${signal}_ENDPOINT, seen alone`,
        env: { [`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`]: `https://u:${signal.toLowerCase()}-url-pw-31@collector.example/v1/x` },
        message: `rejected ${signal.toLowerCase()}-url-pw-31`,
        secret: `${signal.toLowerCase()}-url-pw-31`,
      },
    ]),
    {
      name: 'a header of OTEL_EXPORTER_OTLP_HEADERS, echoed',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example', OTEL_EXPORTER_OTLP_HEADERS: 'dd-api-key=shared-key-9876' },
      message: '{"dd-api-key":"shared-key-9876"}',
      secret: 'shared-key-9876',
    },
    {
      name: 'a header of PYRO_RUN_PYROSCOPE_HEADERS, echoed',
      env: { PYROSCOPE_SERVER_ADDRESS: 'https://p.example', PYRO_RUN_PYROSCOPE_HEADERS: 'x-scope-token=pyro-hdr-5555' },
      message: 'bad x-scope-token: pyro-hdr-5555',
      secret: 'pyro-hdr-5555',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const out = redactorOf(c.env)(c.message);
      assert.ok(!out.includes(c.secret), out);
    });
  }
});

describe('proxy warnings', () => {
  it('name the proxy readably and mask only its credentials', () => {
    const env = { HTTPS_PROXY: 'http://proxyuser:proxy-pw-1234@proxy.corp:3128' };
    const redact = createRedactor(secretValues(env, readConfig(env).config));
    assert.equal(
      redact(
        'spans upload to https://otlp.example/v1/traces through proxy http://proxy.corp:3128 (HTTPS_PROXY) failed: proxy-pw-1234 at http://proxyuser:proxy-pw-1234@proxy.corp:3128',
      ),
      `spans upload to https://otlp.example/v1/traces through proxy http://proxy.corp:3128 (HTTPS_PROXY) failed: ${M} at http://${M}@proxy.corp:3128`,
    );
  });
});

describe('what the logger prints', () => {
  it('shows control characters as escapes, after the secrets are masked', () => {
    const lines: string[] = [];
    const log = new Logger(
      'warn',
      (text) => text.replaceAll('hunter2', '***'),
      (line) => lines.push(line),
    );
    log.warn('backend said: \u001b[31mhunter2\u001b[0m\r\nok');
    assert.deepEqual(lines, ['pyro-run: warning: backend said: \\x1b[31m***\\x1b[0m\\r\\nok\n']);
  });
});
