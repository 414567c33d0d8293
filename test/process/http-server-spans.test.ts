/**
 * pyro-run's path for the requests a server receives (src/tracing/http-server-spans.ts) makes the
 * span @opentelemetry/instrumentation-http makes: the same requests to a server traced by the
 * package's own class and by pyro-run's give the same spans — name, kind, scope, attributes,
 * status, events, parent and children — for a route told by a framework, error statuses, a handler
 * that throws, a response that emits an error, work after a timer, propagated and query-bearing
 * requests, and the shapes the plain attributes path declines.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attributesOf as attributes, type ServerRequest, serverSpans } from '../support/server-spans.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const REQUESTS: readonly ServerRequest[] = [
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

describe("a server's spans", () => {
  it("are the http instrumentation's, request for request", async () => {
    const [theirs, ours] = await Promise.all([serverSpans('serve.mjs', ['otel'], REQUESTS), serverSpans('serve.mjs', ['pyro-run'], REQUESTS)]);
    assert.deepEqual(ours, theirs);

    // What the comparison covers, read from pyro-run's side.
    const servers = ours.spans.filter((span) => span.kind === 1);
    assert.equal(servers.length, REQUESTS.length);
    const named = (name: string) => servers.filter((span) => span.name === name);
    assert.equal(named('GET /users/:id').length, 2);
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
