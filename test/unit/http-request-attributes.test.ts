/**
 * plainRequestAttributes against @opentelemetry/instrumentation-http's own getIncomingRequestAttributes
 * on the same IncomingMessage: where ours answers, the attributes are the instrumentation's — same
 * keys, values and order — and the shapes it declines go to the instrumentation's function. The
 * table says which shapes take the plain path (so the test cannot pass by declining everything);
 * the generated requests cover the class: every target and Host header drawn from characters a
 * URL treats differently.
 */
import assert from 'node:assert/strict';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { describe, it } from 'node:test';
import type { Attributes } from '@opentelemetry/api';
import { plainRequestAttributes } from '../../src/tracing/http-request-attributes.js';
import type { HttpUtils } from '../../src/tracing/http-server-spans.js';
import { HTTP_UTILS_ENTRY, instrumentationPackage } from '../../src/vendor.js';
import { seededDraw } from '../support/seeded.js';

const utils = instrumentationPackage('http')[HTTP_UTILS_ENTRY] as HttpUtils;
const parts = { peer: utils.uncachedPeer, redactQuery: utils.redactQueryString, redactedNames: utils.defaultQueryStringsToRedact };
const silent = { verbose() {}, debug() {}, info() {}, warn() {}, error() {} };

interface Shape {
  method?: string;
  url?: string;
  headers?: Record<string, string | string[]>;
  httpVersion?: string;
  /** null: a socket no longer connected, whose peer Node reports as unknown. */
  peer?: { address: string; port: number } | null;
}

/** A real IncomingMessage on a socket whose peer is `peer` (as a connected socket reports it). */
function request({
  method = 'GET',
  url = '/',
  headers = { host: 'shop.example:8080' },
  httpVersion = '1.1',
  peer = { address: '10.0.0.7', port: 51234 },
}: Shape): IncomingMessage {
  const socket = new Socket();
  Object.defineProperty(socket, '_peername', { value: peer === null ? undefined : { address: peer.address, port: peer.port, family: 'IPv4' }, writable: true });
  const message = new IncomingMessage(socket);
  message.method = method;
  message.url = url;
  message.headers = headers as IncomingMessage['headers'];
  message.httpVersion = httpVersion;
  return message;
}

const theirs = (shape: Shape, scheme: 'http' | 'https'): Attributes =>
  utils.getIncomingRequestAttributes(request(shape), { component: scheme, enableSyntheticSourceDetection: false }, silent);
const ours = (shape: Shape, scheme: 'http' | 'https'): Attributes | undefined => plainRequestAttributes(request(shape), scheme, parts);

const PLAIN: readonly [rule: string, shape: Shape][] = [
  ['a GET of a path', { url: '/users/7' }],
  ['the root', { url: '/' }],
  ['a path with every character a URL keeps as it is', { url: "/a-b_c.d~e!f$g&h'i(j)k*l+m,n;o=p:q@r/s" }],
  ['a file name with dots that are no dot segment', { url: '/static/app.min.js' }],
  ['a query', { url: '/search?q=shoes&page=2' }],
  ['a query naming a parameter to redact', { url: '/download?file=a.zip&sig=secret&X-Amz-Signature=abc' }],
  ['a query with escapes, plus signs and quotes', { url: '/q?a=%20b+c&d=%zz&e=\'"&f' }],
  ['an empty query', { url: '/a?' }],
  ['a Host without a port', { url: '/', headers: { host: 'shop.example' } }],
  ['a Host with an empty port', { url: '/', headers: { host: 'shop.example:' } }],
  ['no Host at all (HTTP/1.0)', { url: '/x', headers: {}, httpVersion: '1.0' }],
  ['an empty Host', { url: '/x', headers: { host: '' } }],
  ['a user agent', { url: '/x', headers: { host: 'a:1', 'user-agent': 'curl/8.5.0' } }],
  ['a POST', { method: 'POST', url: '/orders' }],
  ['a HEAD, PUT, DELETE, PATCH and OPTIONS alike', { method: 'PATCH', url: '/orders/1' }],
  ['a socket already gone (no peer)', { url: '/x', peer: null }],
  ['a Host with credentials and a path, which a URL accepts as its base', { url: '/x', headers: { host: 'u@shop.example/y' } }],
];

const DECLINED: readonly [rule: string, shape: Shape][] = [
  ['a Forwarded header (the instrumentation parses it)', { url: '/', headers: { host: 'a', forwarded: 'for=1.2.3.4;host=b;proto=https' } }],
  ['an X-Forwarded-Host header', { url: '/', headers: { host: 'a', 'x-forwarded-host': 'b', 'x-forwarded-proto': 'https' } }],
  ['an empty X-Forwarded-Host header', { url: '/', headers: { host: 'a', 'x-forwarded-host': '' } }],
  ['an X-Forwarded-For header', { url: '/', headers: { host: 'a', 'x-forwarded-for': '1.2.3.4, 5.6.7.8' } }],
  ['a Host that is an IPv6 literal', { url: '/', headers: { host: '[::1]:8080' } }],
  ['a Host no URL can have', { url: '/', headers: { host: 'bad host' } }],
  ['a Host with a port out of range', { url: '/', headers: { host: 'a:70000' } }],
  ['a dot segment', { url: '/a/../b' }],
  ['a trailing dot segment', { url: '/a/.' }],
  ['a percent escape in the path', { url: '/caf%C3%A9' }],
  ['a path a URL would encode', { url: '/a b' }],
  ['a protocol-relative target', { url: '//evil.example/x' }],
  ['an asterisk target', { method: 'OPTIONS', url: '*' }],
  ['an absolute-form target', { url: 'http://other.example/x' }],
  ['a fragment', { url: '/a#b' }],
  ['a query that is not printable ASCII', { url: '/a?q=é' }],
  ['a method outside the common ones', { method: 'PURGE', url: '/' }],
  ['a method in lower case', { method: 'get', url: '/' }],
];

describe('a request of a plain shape gets the attributes the http instrumentation gives it', () => {
  for (const [rule, shape] of PLAIN) {
    it(rule, () => {
      for (const scheme of ['http', 'https'] as const) {
        const attributes = ours(shape, scheme);
        assert.ok(attributes, `${scheme}: declined`);
        assert.deepEqual(Object.entries(attributes), Object.entries(theirs(shape, scheme)), scheme);
      }
    });
  }
});

describe('any other shape is left to the instrumentation', () => {
  for (const [rule, shape] of DECLINED) {
    it(rule, () => {
      for (const scheme of ['http', 'https'] as const) assert.equal(ours(shape, scheme), undefined, scheme);
    });
  }
});

describe("every generated target and Host is either declined or given the instrumentation's attributes", () => {
  it('holds on 5 000 requests drawn from the characters a URL treats apart', () => {
    // Characters a URL encodes, resolves, splits on or keeps, and some it has never to see.
    const alphabet = [
      'a',
      'Z',
      '0',
      '/',
      '.',
      '..',
      '%',
      '%2e',
      '%41',
      '?',
      '&',
      '=',
      '+',
      '#',
      ' ',
      '"',
      "'",
      '<',
      '>',
      '\\',
      '|',
      '^',
      '`',
      '{',
      '}',
      '[',
      ']',
      ':',
      '@',
      ';',
      ',',
      '~',
      '!',
      '$',
      '*',
      '(',
      ')',
      'é',
      '\t',
      'sig',
      'Signature',
    ];
    const hosts = [
      '',
      'a',
      'a:1',
      'a:',
      'a:65535',
      'a:65536',
      'a:x',
      'a b',
      '[::1]',
      '[::1]:2',
      'u@a',
      'a/b',
      'a?b',
      'a#b',
      'A.EXAMPLE',
      'xn--bcher-kva.example',
      '1.2.3.4:80',
      'a..b',
    ];
    const next = seededDraw(7);
    let plain = 0;
    for (let i = 0; i < 5000; i++) {
      let url = next(10) === 0 ? '' : '/';
      for (let length = next(8); length > 0; length--) url += alphabet[next(alphabet.length)];
      const host = hosts[next(hosts.length)]!;
      const shape: Shape = { url, headers: host === '' && next(2) === 0 ? {} : { host } };
      const scheme = next(2) === 0 ? 'http' : 'https';
      const attributes = ours(shape, scheme);
      if (attributes === undefined) continue;
      plain++;
      assert.deepEqual(Object.entries(attributes), Object.entries(theirs(shape, scheme)), `${scheme} ${JSON.stringify(shape)}`);
    }
    assert.ok(plain > 500, `only ${plain} of 5 000 took the plain path`);
  });
});
