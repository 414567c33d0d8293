/** express 5 and the router instrumentation: router's spans stand down where express's instrumentation spans. */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import { ROUTER_TESTED, routerYieldsToExpress } from '../../src/frameworks/express-router.js';
import { repoRoot } from '../support/child.js';

type Handler = (this: unknown, ...args: unknown[]) => unknown;

const EXPRESS = { instrumentationName: '@opentelemetry/instrumentation-express' } as Instrumentation;

/** A stand-in for router's instrumentation whose patcher marks what it would span. */
function routerInstrumentation(instrumentationVersion = ROUTER_TESTED[0]) {
  return {
    instrumentationName: '@opentelemetry/instrumentation-router',
    instrumentationVersion,
    _requestHandlerPatcher: (original: Handler): Handler =>
      function traced(this: unknown, ...args: unknown[]) {
        return `traced ${String(original.apply(this, args))}`;
      },
  };
}

/** A function as shimmer leaves it wrapped (what @opentelemetry/instrumentation's isWrapped reads). */
function wrappedFn(): Handler {
  const original = () => undefined;
  return Object.assign(() => undefined, { __original: original, __unwrap: () => undefined, __wrapped: true });
}

const handleRequest = function (this: { name: string }, req: unknown) {
  return `${this.name} ran for ${typeof req}`;
};

describe('routerYieldsToExpress', () => {
  const cases: { name: string; layer: { handle?: unknown }; req: unknown; expected: 'original' | 'traced' }[] = [
    { name: 'a layer whose handle express wrapped: express spans it', layer: { handle: wrappedFn() }, req: {}, expected: 'original' },
    {
      name: 'any layer of an app whose use express wrapped: the route span holds its handlers',
      layer: { handle: () => undefined },
      req: { app: { use: wrappedFn() } },
      expected: 'original',
    },
    { name: 'a plain router, a handler express did not wrap: router spans it', layer: { handle: () => undefined }, req: {}, expected: 'traced' },
    {
      name: 'an express app the express instrumentation did not reach: router spans it',
      layer: { handle: () => undefined },
      req: { app: { use: () => undefined } },
      expected: 'traced',
    },
    { name: 'a request that is no object: router decides, as without us', layer: { handle: () => undefined }, req: null, expected: 'traced' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const router = routerInstrumentation();
      routerYieldsToExpress([EXPRESS, router as unknown as Instrumentation]);
      const handler = router._requestHandlerPatcher(handleRequest as Handler);
      assert.equal(handler.length, 3, 'the arity of Layer#handleRequest');
      const layer = { name: 'layer', ...c.layer };
      const ran = `layer ran for ${typeof c.req}`;
      assert.equal(
        handler.call(layer, c.req, {}, () => undefined),
        c.expected === 'original' ? ran : `traced ${ran}`,
      );
    });
  }

  it('leaves router alone when the express instrumentation is not loaded', () => {
    const router = routerInstrumentation();
    const before = router._requestHandlerPatcher;
    routerYieldsToExpress([router as unknown as Instrumentation]);
    assert.equal(router._requestHandlerPatcher, before);
  });

  it('leaves a release of router it is not tested on alone: all of its spans stay, as without pyro-run', () => {
    const router = routerInstrumentation('99.0.0');
    const before = router._requestHandlerPatcher;
    routerYieldsToExpress([EXPRESS, router as unknown as Instrumentation]);
    assert.equal(router._requestHandlerPatcher, before);
  });

  it('the bundled router instrumentation is a release it is tested on', async () => {
    const { version } = JSON.parse(await readFile(path.join(repoRoot, 'node_modules/@opentelemetry/instrumentation-router/package.json'), 'utf8')) as {
      version: string;
    };
    assert.ok(ROUTER_TESTED.includes(version), `bundled ${version}; tested: ${ROUTER_TESTED.join(', ')} — run test/process/frameworks.test.ts and add it`);
  });

  it('does nothing without the router instrumentation, or with one that has no such patcher', () => {
    assert.doesNotThrow(() => routerYieldsToExpress([EXPRESS]));
    const other = { instrumentationName: '@opentelemetry/instrumentation-router' } as Instrumentation;
    routerYieldsToExpress([EXPRESS, other]);
    assert.equal('_requestHandlerPatcher' in other, false);
  });
});
