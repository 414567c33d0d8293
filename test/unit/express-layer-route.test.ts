/**
 * constructedRoute and matchedRoute against @opentelemetry/instrumentation-express's own
 * getConstructedRoute and getActualMatchedRoute on the same request: the same route for every
 * store of layer paths — the shapes express apps mount (table), and stores generated from the
 * pieces the package's rules tell apart (root and splat mounts, parameters, patterns, arrays,
 * regular expressions, doubled slashes) against URLs that do and do not start with them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { constructedRoute, matchedRoute } from '../../src/frameworks/express-layer-route.js';
import { EXPRESS_TYPES_ENTRY, EXPRESS_UTILS_ENTRY, instrumentationPackage } from '../../src/vendor.js';
import { seededDraw } from '../support/seeded.js';

interface PackageRoutes {
  getConstructedRoute(req: object): string;
  getActualMatchedRoute(req: object): string | undefined;
}
const bundle = instrumentationPackage('express');
const utils = bundle[EXPRESS_UTILS_ENTRY] as PackageRoutes;
const { _LAYERS_STORE_PROPERTY: STORE } = bundle[EXPRESS_TYPES_ENTRY] as { _LAYERS_STORE_PROPERTY: string };

/** A request as the package leaves it: the store hidden on it, as its storeLayerPath defines it. */
function request(store: unknown[] | undefined, originalUrl: string): object {
  const req = { originalUrl };
  if (store !== undefined) Object.defineProperty(req, STORE, { enumerable: false, value: store });
  return req;
}

function assertSame(store: unknown[], originalUrl: string): { route: string; matched: string | undefined } {
  const req = request(store, originalUrl);
  const route = constructedRoute(store);
  const matched = matchedRoute(store, route, originalUrl);
  const label = `${JSON.stringify(store)} at ${JSON.stringify(originalUrl)}`;
  assert.equal(route, utils.getConstructedRoute(req), `constructed: ${label}`);
  assert.equal(matched, utils.getActualMatchedRoute(req), `matched: ${label}`);
  return { route, matched };
}

const TABLE: readonly [rule: string, store: unknown[], originalUrl: string, matched: string | undefined][] = [
  ['no layer path yet: no route', [], '/users/7', undefined],
  ['a route with a parameter', ['/users/:id'], '/users/7', '/users/:id'],
  ['a router mounted under a path, then its route', ['/api', '/users/:id'], '/api/users/7', '/api/users/:id'],
  ['root mounts add nothing', ['/', '/users/:id'], '/users/7', '/users/:id'],
  ['root mounts only, at the root: the root', ['/', '/'], '/', '/'],
  ['root mounts only, elsewhere: no route', ['/', '/'], '/users', undefined],
  ["express 5's splat mount adds nothing", ['/{*splat}', '/users'], '/users', '/users'],
  ["express 4's /* adds nothing", ['/*', '/users'], '/users', '/users'],
  ['a star alone is the route', ['*'], '/anything', '*'],
  ['a static route the URL starts with', ['/health'], '/health?full=1', '/health'],
  ['a static route the URL does not start with: no route', ['/health'], '/other', undefined],
  ['a path without its leading slash gets one', ['users'], '/users/7', '/users'],
  ['doubled slashes from mounts collapse', ['/api/', '/users'], '/api/users', '/api/users'],
  ['an array of paths, as joined', ['/a,/b'], '/a', '/a,/b'],
  ['a regular expression mount, as written', ['/\\/ab?c/'], '/ac', '/\\/ab?c/'],
  ['a pattern with brackets', ['/files/[id]'], '/files/1', '/files/[id]'],
];

describe("the route of a request's layer paths is the express instrumentation's", () => {
  for (const [rule, store, originalUrl, matched] of TABLE) {
    it(rule, () => {
      assert.equal(assertSame(store, originalUrl).matched, matched);
    });
  }

  it('holds on 5 000 generated stores and URLs', () => {
    const pieces = [
      '/',
      '/*',
      '/{*splat}',
      '/{*x}}',
      '/{x}',
      '*',
      '/users',
      'users',
      '/:id',
      ':id',
      '/api/',
      '//',
      '/a,/b',
      '/\\/x/',
      '/[id]',
      '/v1',
      '/v1/',
      '',
      '/{*',
      '/a*b',
    ];
    const urls = ['/', '/users', '/users/7', '/api/users/7', '/v1/users', '/other', '/a', '/api//users', ''];
    const next = seededDraw(11);
    const outcomes = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const store: string[] = [];
      for (let length = next(5); length > 0; length--) store.push(pieces[next(pieces.length)]!);
      const { matched } = assertSame(store, urls[next(urls.length)]!);
      outcomes.add(matched === undefined ? 'none' : matched === '/' ? 'root' : matched.startsWith('/') ? 'route' : 'as written');
    }
    // Every kind of answer was reached, so the comparison is not of one branch only.
    assert.deepEqual([...outcomes].sort(), ['as written', 'none', 'root', 'route']);
  });

  it('reads anything else in the store as the package does', () => {
    assertSame(['/api', undefined, null, 42, '/users'], '/api/users');
    assertSame([null], '/');
  });
});
