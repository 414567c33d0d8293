/**
 * pyro-run's path through express's layers (src/frameworks/express-layer-spans.ts) makes the spans
 * @opentelemetry/instrumentation-express makes: the same requests to an express app traced by the
 * packages' own classes and by pyro-run's give the same spans — name, attributes (`http.route`,
 * `express.*`), status, exception events, parents and children, and the route the HTTP span is
 * named by — for middleware that calls `next` at once, later, or with an error; routers mounted
 * under paths and nested; `next('route')`; errors passed, thrown and rejected; a handler that
 * responds after a timer; `next === req.next` inside a layer; array, regular-expression and splat
 * routes; a mounted app; and a request no route matches. With the package's http path (no server
 * span of pyro-run's to end its layers with), a layer's span ends in a `close` listener of its own,
 * as the package's does: the same spans again.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attributesOf as attributes, type ServerRequest, serverSpans } from '../support/server-spans.js';

const REQUESTS: readonly ServerRequest[] = [
  { path: '/api/users/7' },
  { path: '/api/skip/3' },
  { path: '/api/deeper/ada' },
  { path: '/fail' },
  { path: '/fail-string' },
  { path: '/throw' },
  { path: '/reject' },
  { path: '/later' },
  { path: '/slow/x' },
  { path: '/format', headers: { accept: 'text/html' } },
  { path: '/two' },
  { path: '/regex' },
  { path: '/files/a/b.txt' },
  { path: '/sub/inner' },
  { path: '/nowhere' },
];

describe("an express app's spans", () => {
  it("are the express instrumentation's, layer for layer", async () => {
    const [theirs, ours, oursOnTheirHttp] = await Promise.all([
      serverSpans('express.mjs', ['otel', 'otel'], REQUESTS),
      serverSpans('express.mjs', ['pyro-run', 'pyro-run'], REQUESTS),
      serverSpans('express.mjs', ['otel', 'pyro-run'], REQUESTS),
    ]);
    assert.deepEqual(ours, theirs);
    assert.deepEqual(oursOnTheirHttp, theirs);

    // What the comparison covers, read from pyro-run's side.
    assert.deepEqual(ours.statuses, [200, 200, 200, 500, 500, 500, 500, 200, 500, 406, 200, 200, 200, 200, 404]);
    const servers = ours.spans.filter((span) => span.kind === 1);
    assert.equal(servers.length, REQUESTS.length);
    const names = new Set(servers.map((span) => span.name));
    for (const name of ['GET /api/users/:id', 'GET /api/skip/:id', 'GET /api/deeper/:name', 'GET /files/{*rest}', 'GET /sub/inner'])
      assert.ok(names.has(name), name);
    const layers = ours.spans.filter((span) => span.scope === '@opentelemetry/instrumentation-express');
    const types = new Set(layers.map((span) => attributes(span)['express.type']));
    assert.deepEqual([...types].sort(), ['middleware', 'request_handler', 'router']);
    assert.ok(layers.every((span) => span.ended));
    // express 5's route layers are named `request handler` (the package reads `layer.path`, which
    // router 2 does not set); their `http.route` tells them apart.
    const handlerOf = (route: string) => layers.find((span) => span.name === 'request handler' && attributes(span)['http.route'] === route);
    assert.equal(handlerOf('/api/users/:id')?.parentName, 'GET /api/users/:id');
    const loadUser = ours.spans.find((span) => span.name === 'load user');
    assert.equal(loadUser?.parentName, 'request handler');
    assert.equal(ours.spans.find((span) => span.name === 'after a timer')?.parentName, 'request handler');
    for (const route of ['/fail', '/throw', '/reject', '/fail-string']) {
      assert.equal(handlerOf(route)?.status.code, 2, route);
      assert.deepEqual(
        handlerOf(route)?.events.map((event) => event.name),
        ['exception'],
        route,
      );
    }
    const slow = layers.filter((span) => attributes(span)['express.name'] === 'later' || attributes(span)['express.name'] === 'fails');
    assert.deepEqual(
      slow.map((span) => [span.name, span.status.code]),
      [
        ['middleware - later', 0],
        ['middleware - fails', 2],
      ],
    );
    assert.deepEqual(ours.thrown, []);
  });
});
