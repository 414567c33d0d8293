/**
 * pyro-run's path for the requests a server receives (src/tracing/http-server-spans.ts) makes the
 * span @opentelemetry/instrumentation-http makes: the same requests to a server traced by the
 * package's own class and by pyro-run's give the same spans — name, kind, scope, attributes,
 * status, events, parent and children — for a route told by a framework, error statuses, a handler
 * that throws, a response that emits an error, work after a timer, propagated and query-bearing
 * requests, and the shapes the plain attributes path declines.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { describe, it } from 'node:test';
import { fixture, runNode } from '../support/child.js';

interface SpanView {
  name: string;
  kind: number;
  status: { code: number; message?: string };
  attributes: [string, unknown][];
  events: { name: string; attributes: [string, unknown][] }[];
  parent?: { traceId: string; remote: boolean };
  parentName?: string;
}

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const REQUESTS: readonly { path: string; headers?: Record<string, string> }[] = [
  { path: '/' },
  { path: '/users/7', headers: { 'user-agent': 'shop-client/1.0' } },
  { path: '/users/8?expand=orders&sig=secret', headers: { traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` } },
  { path: '/fail' },
  { path: '/missing' },
  { path: '/throw' },
  { path: '/response-error' },
  { path: '/later' },
  { path: '/a/../b' },
  { path: '/', headers: { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-host': 'shop.example', 'x-forwarded-proto': 'https' } },
  { path: '/', headers: { forwarded: 'for=198.51.100.4;host=api.example;proto=https' } },
  { path: '/caf%C3%A9?q=%20x+y' },
];

function send(port: number, path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

async function spansOf(which: 'otel' | 'pyro-run'): Promise<{ spans: SpanView[]; thrown: string[] }> {
  const child = runNode([fixture('http-server-spans/serve.mjs'), which]);
  const port = Number((await child.line(/listening (\d+)/))[1]);
  for (const { path, headers } of REQUESTS) await send(port, path, headers);
  const done = child.line(/^\{.*\}$/m);
  await send(port, '/done');
  const [line] = await done;
  await child.exit();
  return JSON.parse(line);
}

describe("a server's spans", () => {
  it("are the http instrumentation's, request for request", async () => {
    const [theirs, ours] = await Promise.all([spansOf('otel'), spansOf('pyro-run')]);
    assert.deepEqual(ours, theirs);

    // What the comparison covers, read from pyro-run's side.
    const servers = ours.spans.filter((span) => span.kind === 1);
    assert.equal(servers.length, REQUESTS.length);
    const named = (name: string) => servers.filter((span) => span.name === name);
    assert.equal(named('GET /users/:id').length, 2);
    const attributes = (span: SpanView) => Object.fromEntries(span.attributes);
    const propagated = named('GET /users/:id').find((span) => span.parent?.remote);
    assert.equal(propagated?.parent?.traceId, TRACE_ID);
    assert.equal(attributes(propagated!)['url.query'], 'expand=orders&sig=REDACTED');
    assert.equal(attributes(propagated!)['http.route'], '/users/:id');
    const failed = servers.find((span) => attributes(span)['url.path'] === '/fail');
    assert.equal(failed?.status.code, 2);
    assert.equal(attributes(failed!)['error.type'], '500');
    const thrown = servers.find((span) => attributes(span)['url.path'] === '/throw');
    assert.deepEqual(
      thrown?.events.map((event) => event.name),
      ['exception'],
    );
    assert.deepEqual(ours.thrown, ['handler failed']);
    const broke = servers.find((span) => attributes(span)['url.path'] === '/response-error');
    assert.equal(attributes(broke!)['error.type'], 'TypeError');
    assert.equal(ours.spans.find((span) => span.name === 'after a timer')?.parentName, 'GET');
    assert.equal(ours.spans.find((span) => span.name === 'load user')?.parentName, 'GET /users/:id');
    const forwarded = servers.filter((span) => attributes(span)['client.address'] === '203.0.113.9' || attributes(span)['client.address'] === '198.51.100.4');
    assert.equal(forwarded.length, 2);
  });
});
