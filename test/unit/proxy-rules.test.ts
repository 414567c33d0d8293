/**
 * HTTP_PROXY, HTTPS_PROXY and NO_PROXY as tables (src/config/proxy.ts): which variable wins, what a
 * proxy value may look like, and which URLs go through which proxy. NO_PROXY follows Go's
 * golang.org/x/net/http/httpproxy; precedence follows curl and Node (lower case first).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { basicCredential } from '../../src/util/basic-auth.js';
import { parseNoProxyEntry, parseProxy, proxyFor, readProxies, type NoProxyRule } from '../../src/config/proxy.js';

const HTTP = 'http://http-proxy:3128';
const HTTPS = 'http://https-proxy:3128';

describe('which variable is used', () => {
  const cases: { name: string; env: Record<string, string>; http?: string; https?: string; noProxy?: NoProxyRule[] }[] = [
    { name: 'nothing set: no proxy', env: {} },
    { name: 'HTTP_PROXY serves http:// URLs', env: { HTTP_PROXY: HTTP }, http: 'HTTP_PROXY' },
    { name: 'http_proxy too', env: { http_proxy: HTTP }, http: 'http_proxy' },
    { name: 'lower case wins over upper case (curl, Node, undici)', env: { http_proxy: HTTP, HTTP_PROXY: 'http://other:1' }, http: 'http_proxy' },
    { name: 'the same for https_proxy', env: { https_proxy: HTTPS, HTTPS_PROXY: 'http://other:1' }, https: 'https_proxy' },
    { name: 'a blank lower-case value counts as not set', env: { http_proxy: '  ', HTTP_PROXY: HTTP }, http: 'HTTP_PROXY' },
    { name: 'HTTPS_PROXY serves https:// URLs', env: { HTTPS_PROXY: HTTPS }, https: 'HTTPS_PROXY' },
    { name: 'https:// URLs do not fall back to HTTP_PROXY (Go, curl, Node)', env: { HTTP_PROXY: HTTP }, http: 'HTTP_PROXY' },
    { name: 'both', env: { HTTP_PROXY: HTTP, HTTPS_PROXY: HTTPS }, http: 'HTTP_PROXY', https: 'HTTPS_PROXY' },
    {
      name: 'no_proxy wins over NO_PROXY',
      env: { HTTP_PROXY: HTTP, no_proxy: 'a.example', NO_PROXY: 'b.example' },
      http: 'HTTP_PROXY',
      noProxy: [{ kind: 'domain', suffix: '.a.example', exact: true, port: '' }],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const { settings, unusable } = readProxies(c.env);
      assert.deepEqual(unusable, []);
      assert.equal(settings?.http?.env, c.http);
      assert.equal(settings?.https?.env, c.https);
      if (c.noProxy) assert.deepEqual(settings?.noProxy, c.noProxy);
    });
  }

  it('NO_PROXY alone sets no proxy', () => {
    assert.equal(readProxies({ NO_PROXY: 'example.com' }).settings, undefined);
  });
});

describe('what a proxy value may be', () => {
  const credential = (user: string, password: string) => basicCredential(user, password);
  const good: { value: string; url: string; credential?: string }[] = [
    { value: 'http://proxy.corp:3128', url: 'http://proxy.corp:3128' },
    { value: 'https://proxy.corp:3129', url: 'https://proxy.corp:3129' },
    { value: 'proxy.corp:3128', url: 'http://proxy.corp:3128' },
    { value: 'proxy.corp', url: 'http://proxy.corp' },
    { value: 'HTTP://Proxy.Corp:3128/', url: 'http://proxy.corp:3128' },
    { value: 'http://proxy.corp:80', url: 'http://proxy.corp' },
    { value: 'http://proxy.corp:3128/some/path?x=1', url: 'http://proxy.corp:3128' },
    { value: ' http://proxy.corp:3128 ', url: 'http://proxy.corp:3128' },
    { value: 'http://[::1]:3128', url: 'http://[::1]:3128' },
    { value: 'http://10.0.0.1:3128', url: 'http://10.0.0.1:3128' },
    { value: 'http://user:p%40ss@proxy.corp:3128', url: 'http://proxy.corp:3128', credential: credential('user', 'p@ss') },
    { value: 'user:pass@proxy.corp:3128', url: 'http://proxy.corp:3128', credential: credential('user', 'pass') },
    { value: 'http://user@proxy.corp', url: 'http://proxy.corp', credential: credential('user', '') },
  ];
  for (const c of good) {
    it(`${c.value} → ${c.url}${c.credential ? ' with Basic credentials' : ''}`, () => {
      const parsed = parseProxy('HTTP_PROXY', c.value.trim());
      assert.ok(parsed.ok, JSON.stringify(parsed));
      assert.deepEqual(parsed.endpoint, { url: c.url, env: 'HTTP_PROXY', credential: c.credential });
    });
  }

  const bad: { value: string; message: RegExp }[] = [
    { value: 'socks5://proxy.corp:1080', message: /uses socks5:\/\/ \(only http:\/\/ and https:\/\/ proxies are supported\)/ },
    { value: 'ftp://user:hunter2-secret@proxy.corp', message: /uses ftp:\/\// },
    { value: 'http://proxy.corp:99999', message: /is not a proxy URL/ },
    { value: 'http://', message: /is not a proxy URL/ },
    { value: 'http://[::1', message: /is not a proxy URL/ },
    { value: 'http://proxy.corp:3128\r\nX-Injected: 1', message: /holds a line break/ },
  ];
  for (const c of bad) {
    it(`${JSON.stringify(c.value)} is refused, and the message does not repeat it`, () => {
      const parsed = parseProxy('HTTPS_PROXY', c.value);
      assert.ok(!parsed.ok);
      assert.match(parsed.message, c.message);
      assert.ok(!parsed.message.includes('proxy.corp') && !parsed.message.includes('hunter2'), parsed.message);
    });
  }

  it('an unusable value is reported by the variable that holds it, and is not used', () => {
    const { settings, unusable } = readProxies({ https_proxy: 'socks5://proxy.corp:1080', HTTPS_PROXY: HTTPS, HTTP_PROXY: HTTP });
    assert.deepEqual(unusable, [{ scheme: 'https', env: 'https_proxy', message: 'uses socks5:// (only http:// and https:// proxies are supported)' }]);
    assert.equal(settings?.https, undefined);
    assert.equal(settings?.http?.url, HTTP);
  });
});

describe('NO_PROXY entries', () => {
  const cases: { entry: string; rule: NoProxyRule | undefined }[] = [
    { entry: '*', rule: { kind: 'all' } },
    { entry: 'example.com', rule: { kind: 'domain', suffix: '.example.com', exact: true, port: '' } },
    { entry: 'Example.COM', rule: { kind: 'domain', suffix: '.example.com', exact: true, port: '' } },
    { entry: '.example.com', rule: { kind: 'domain', suffix: '.example.com', exact: false, port: '' } },
    { entry: '*.example.com', rule: { kind: 'domain', suffix: '.example.com', exact: false, port: '' } },
    { entry: 'example.com:8080', rule: { kind: 'domain', suffix: '.example.com', exact: true, port: '8080' } },
    { entry: 'bücher.example', rule: { kind: 'domain', suffix: '.xn--bcher-kva.example', exact: true, port: '' } },
    { entry: 'pyroscope', rule: { kind: 'domain', suffix: '.pyroscope', exact: true, port: '' } },
    { entry: '10.1.2.3', rule: { kind: 'ip', address: '10.1.2.3', prefix: 32, family: 'ipv4', port: '' } },
    { entry: '10.1.2.3:4040', rule: { kind: 'ip', address: '10.1.2.3', prefix: 32, family: 'ipv4', port: '4040' } },
    { entry: '10.0.0.0/8', rule: { kind: 'ip', address: '10.0.0.0', prefix: 8, family: 'ipv4', port: '' } },
    { entry: '2001:db8::1', rule: { kind: 'ip', address: '2001:db8::1', prefix: 128, family: 'ipv6', port: '' } },
    { entry: '[2001:db8::1]', rule: { kind: 'ip', address: '2001:db8::1', prefix: 128, family: 'ipv6', port: '' } },
    { entry: '[2001:db8::1]:4040', rule: { kind: 'ip', address: '2001:db8::1', prefix: 128, family: 'ipv6', port: '4040' } },
    { entry: 'fd00::/8', rule: { kind: 'ip', address: 'fd00::', prefix: 8, family: 'ipv6', port: '' } },
    // Entries that match nothing: reported, then ignored.
    { entry: 'http://example.com', rule: undefined },
    { entry: '10.0.0.0/33', rule: undefined },
    { entry: 'example.com/path', rule: undefined },
    { entry: ':8080', rule: undefined },
    { entry: 'exa*mple.com', rule: undefined },
    { entry: '[example.com]', rule: undefined },
  ];
  for (const c of cases) {
    it(`${c.entry} → ${c.rule ? JSON.stringify(c.rule) : 'ignored'}`, () => {
      assert.deepEqual(parseNoProxyEntry(c.entry), c.rule);
    });
  }

  it('entries are separated by commas and white space; the ones that match nothing are listed', () => {
    const reading = readProxies({ HTTP_PROXY: HTTP, no_proxy: 'a.example, b.example  c.example,,http://d.example' });
    assert.deepEqual(
      reading.settings?.noProxy.map((r) => (r.kind === 'domain' ? r.suffix : r.kind)),
      ['.a.example', '.b.example', '.c.example'],
    );
    assert.deepEqual(reading.ignored, { env: 'no_proxy', entries: ['http://d.example'] });
  });
});

describe('which URLs go through which proxy', () => {
  const settingsWith = (noProxy: string) => readProxies({ HTTP_PROXY: HTTP, HTTPS_PROXY: HTTPS, NO_PROXY: noProxy }).settings;
  const cases: { noProxy: string; url: string; via: string | undefined }[] = [
    { noProxy: '', url: 'http://pyroscope.example:4040/ingest', via: HTTP },
    { noProxy: '', url: 'https://otlp.example/v1/traces', via: HTTPS },
    // Never proxied (Go's useProxy): a proxy would reach its own loopback, not ours.
    { noProxy: '', url: 'http://localhost:4040/ingest', via: undefined },
    { noProxy: '', url: 'http://127.0.0.1:4040/ingest', via: undefined },
    { noProxy: '', url: 'http://127.1.2.3:4040/ingest', via: undefined },
    { noProxy: '', url: 'http://[::1]:4040/ingest', via: undefined },
    { noProxy: '', url: 'http://[::ffff:127.0.0.1]:4040/ingest', via: undefined },
    { noProxy: '', url: 'http://localhost.example:4040/ingest', via: HTTP },
    // Domains: the name and its subdomains; a leading dot or *. means subdomains only.
    { noProxy: 'example.com', url: 'http://example.com/x', via: undefined },
    { noProxy: 'example.com', url: 'http://pyro.example.com/x', via: undefined },
    { noProxy: 'example.com', url: 'http://notexample.com/x', via: HTTP },
    { noProxy: '.example.com', url: 'http://example.com/x', via: HTTP },
    { noProxy: '.example.com', url: 'http://pyro.example.com/x', via: undefined },
    { noProxy: '*.example.com', url: 'https://a.b.example.com/x', via: undefined },
    { noProxy: 'EXAMPLE.com', url: 'http://Pyro.Example.COM/x', via: undefined },
    { noProxy: 'bücher.example', url: 'http://xn--bcher-kva.example/x', via: undefined },
    { noProxy: 'xn--bcher-kva.example', url: 'http://bücher.example/x', via: undefined },
    // Ports: the URL's, or its scheme's default.
    { noProxy: 'example.com:4040', url: 'http://example.com:4040/x', via: undefined },
    { noProxy: 'example.com:4040', url: 'http://example.com:4041/x', via: HTTP },
    { noProxy: 'example.com:80', url: 'http://example.com/x', via: undefined },
    { noProxy: 'example.com:443', url: 'https://example.com/x', via: undefined },
    { noProxy: 'example.com:443', url: 'http://example.com/x', via: HTTP },
    // Addresses and ranges, IPv4-mapped IPv6 as IPv4.
    { noProxy: '10.1.2.3', url: 'http://10.1.2.3:4040/x', via: undefined },
    { noProxy: '10.1.2.3', url: 'http://10.1.2.4:4040/x', via: HTTP },
    { noProxy: '10.1.2.3:4040', url: 'http://10.1.2.3:4040/x', via: undefined },
    { noProxy: '10.1.2.3:4040', url: 'http://10.1.2.3:4041/x', via: HTTP },
    { noProxy: '10.0.0.0/8', url: 'http://10.200.0.1/x', via: undefined },
    { noProxy: '10.0.0.0/8', url: 'http://11.0.0.1/x', via: HTTP },
    { noProxy: '10.0.0.0/8', url: 'http://[::ffff:10.0.0.1]/x', via: undefined },
    { noProxy: '10.0.0.0/8', url: 'http://ten.example/x', via: HTTP },
    { noProxy: 'fd00::/8', url: 'http://[fd12::1]:4040/x', via: undefined },
    { noProxy: '2001:db8::1', url: 'http://[2001:db8::1]:4040/x', via: undefined },
    { noProxy: '[2001:db8::1]:4040', url: 'http://[2001:db8::1]:4040/x', via: undefined },
    { noProxy: '[2001:db8::1]:4040', url: 'http://[2001:db8::1]:80/x', via: HTTP },
    // Everything, and lists.
    { noProxy: '*', url: 'https://otlp.example/v1/traces', via: undefined },
    { noProxy: 'a.example, *', url: 'http://b.example/x', via: undefined },
    { noProxy: 'a.example,b.example', url: 'http://b.example/x', via: undefined },
    { noProxy: 'a.example,b.example', url: 'http://c.example/x', via: HTTP },
  ];
  for (const c of cases) {
    it(`NO_PROXY=${JSON.stringify(c.noProxy)}: ${c.url} ${c.via ? `through ${c.via}` : 'direct'}`, () => {
      assert.equal(proxyFor(c.url, settingsWith(c.noProxy))?.url, c.via);
    });
  }

  it('an https:// URL goes direct when only HTTP_PROXY is set, and the other way round', () => {
    const httpOnly = readProxies({ HTTP_PROXY: HTTP }).settings;
    assert.equal(proxyFor('https://otlp.example/v1/traces', httpOnly), undefined);
    const httpsOnly = readProxies({ HTTPS_PROXY: HTTPS }).settings;
    assert.equal(proxyFor('http://pyroscope.example/ingest', httpsOnly), undefined);
  });

  it('the settings are plain data: they reach the flush worker by structured clone unchanged', () => {
    const settings = settingsWith('example.com, 10.0.0.0/8, [::1]:80, *.corp');
    assert.deepEqual(structuredClone(settings), settings);
  });
});
