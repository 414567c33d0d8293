/**
 * routeOfAttributes: which spans name their request's route. The local root is named by it
 * (profiles' span names, the report's endpoints), so a mount path taken for a route would merge
 * every request under `/`, and a route missed would leave them all under `GET`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { routeOfAttributes } from '../../src/frameworks/routes.js';

const CASES: readonly [rule: string, attributes: Record<string, unknown> | undefined, route: string | undefined][] = [
  ['a span without attributes names none', undefined, undefined],
  ['an HTTP span as it starts (no route yet) names none', { 'http.request.method': 'GET', 'url.path': '/users/7', 'server.port': 8080 }, undefined],
  ['a request handler names its http.route', { 'http.route': '/users/:id', 'express.type': 'request_handler' }, '/users/:id'],
  ["Next.js's spans name their next.route", { 'next.route': '/blog/[slug]', 'next.span_type': 'AppRender.getBodyResult' }, '/blog/[slug]'],
  ['http.route wins over next.route', { 'http.route': '/a', 'next.route': '/b' }, '/a'],
  ['an empty http.route is no route; next.route is looked at next', { 'http.route': '', 'next.route': '/b' }, '/b'],
  ['a route that is not a string is no route', { 'http.route': 7 }, undefined],
  ["express's middleware carries its mount path, not a route", { 'http.route': '/', 'express.type': 'middleware' }, undefined],
  ["express's mounted router likewise", { 'http.route': '/api', 'express.type': 'router' }, undefined],
  ["router's (express 5) middleware and routers likewise", { 'http.route': '/api', 'router.type': 'router' }, undefined],
  ["connect's middleware likewise", { 'http.route': '/', 'connect.type': 'middleware' }, undefined],
  ["restify's middleware likewise", { 'http.route': '/', 'restify.type': 'middleware' }, undefined],
  ["connect's request handler names its route", { 'http.route': '/users/:id', 'connect.type': 'request_handler' }, '/users/:id'],
];

describe('routeOfAttributes', () => {
  for (const [rule, attributes, route] of CASES) {
    it(rule, () => {
      assert.equal(routeOfAttributes(attributes), route);
    });
  }
});
