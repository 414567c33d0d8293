import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { originKey, originOfUrl, originTls } from '../../src/export/transport/origin-tls.js';

describe('origin keys: one key however undici or a URL writes the origin', () => {
  const cases: [string, string | undefined][] = [
    ['https://collector:4318/v1/traces', 'https://collector:4318'],
    ['https://Collector.Example/v1/traces', 'https://collector.example:443'],
    ['https://collector.example:443', 'https://collector.example:443'],
    ['http://collector', 'http://collector:80'],
    ['https://[::1]:4318/v1/traces', 'https://::1:4318'],
    ['not a url', undefined],
  ];
  for (const [url, key] of cases) {
    it(`${url} → ${key}`, () => assert.equal(originOfUrl(url), key));
  }
  it('undici connector options (hostname without brackets, port as a string or empty) give the same keys', () => {
    assert.equal(originKey('https:', '::1', '4318'), originOfUrl('https://[::1]:4318'));
    assert.equal(originKey('https:', 'collector.example', ''), originOfUrl('https://collector.example/'));
    assert.equal(originKey('https:', 'collector', 4318), originOfUrl('https://collector:4318'));
  });
});

describe('the OTLP endpoints’ TLS files, read at start', () => {
  const files: Record<string, string> = { '/ca.pem': 'CA PEM', '/client.pem': 'CLIENT PEM', '/client.key': 'KEY PEM' };
  const read = (path: string) => {
    const text = files[path];
    if (text === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
    return text;
  };
  const ca = { env: 'OTEL_EXPORTER_OTLP_CERTIFICATE', path: '/ca.pem' };
  const cert = { env: 'OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE', path: '/client.pem' };
  const key = { env: 'OTEL_EXPORTER_OTLP_CLIENT_KEY', path: '/client.key' };

  it('each file’s text, keyed by the endpoint’s origin', () => {
    assert.deepEqual(originTls([{ url: 'https://collector:4318/v1/traces', files: { ca, cert, key } }], read), {
      material: [{ origin: 'https://collector:4318', ca: 'CA PEM', cert: 'CLIENT PEM', key: 'KEY PEM' }],
      problems: [],
    });
  });
  it('an endpoint with no files gets nothing of its own', () => {
    assert.deepEqual(originTls([{ url: 'https://collector:4318/v1/traces', files: {} }], read), { material: [], problems: [] });
  });
  it('a file that cannot be read: a problem naming the variable and the path, and the rest is used', () => {
    const missingCa = { env: 'OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE', path: '/gone.pem' };
    assert.deepEqual(originTls([{ url: 'https://collector:4318/v1/traces', files: { ca: missingCa, cert, key } }], read), {
      material: [{ origin: 'https://collector:4318', cert: 'CLIENT PEM', key: 'KEY PEM' }],
      problems: ['could not read OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE (/gone.pem: ENOENT): not used'],
    });
  });
  it('a client certificate whose key cannot be read is not used (never half a pair)', () => {
    const goneKey = { ...key, path: '/gone.key' };
    const { material, problems } = originTls([{ url: 'https://collector:4318/v1/traces', files: { ca, cert, key: goneKey } }], read);
    assert.deepEqual(material, [{ origin: 'https://collector:4318', ca: 'CA PEM' }]);
    assert.equal(problems.length, 1);
  });
  it('files for an endpoint that is not https://: a problem, nothing used', () => {
    assert.deepEqual(originTls([{ url: 'http://localhost:4318/v1/traces', files: { ca } }], read), {
      material: [],
      problems: ['OTEL_EXPORTER_OTLP_CERTIFICATE set, but http://localhost:4318/v1/traces is not https: not used'],
    });
  });
  it('two signals on one origin: the first one’s files', () => {
    const other = { env: 'OTEL_EXPORTER_OTLP_PROFILES_CERTIFICATE', path: '/client.pem' };
    const { material } = originTls(
      [
        { url: 'https://collector:4318/v1/traces', files: { ca } },
        { url: 'https://collector:4318/v1development/profiles', files: { ca: other } },
      ],
      read,
    );
    assert.deepEqual(material, [{ origin: 'https://collector:4318', ca: 'CA PEM' }]);
  });
});
