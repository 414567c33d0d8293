import type { Instrumentation } from '@opentelemetry/instrumentation';
import { otelInstrumentation } from '../vendor.js';

const EXPRESS = '@opentelemetry/instrumentation-express';
const ROUTER = '@opentelemetry/instrumentation-router';

type Handler = (this: unknown, ...args: unknown[]) => unknown;

/** What of @opentelemetry/instrumentation-router this reaches: the factory it hands shimmer for `Layer#handleRequest`. */
interface RouterPatcher {
  _requestHandlerPatcher(original: Handler): Handler;
}

/**
 * The releases of router's instrumentation whose `_requestHandlerPatcher` (a private method) this
 * is tested on: the one bundled, in test/process/frameworks.test.ts. Another release keeps all of
 * router's spans, as without pyro-run, until it is tested.
 */
export const ROUTER_TESTED: readonly string[] = ['0.68.0'];

/**
 * express 5 routes through the `router` package, and two instrumentations of the set span its
 * layers: express's, on every layer an app registers (`request handler`, `middleware - <name>`,
 * with `express.*` attributes), and router's, on every `Layer#handleRequest` call — the same
 * layers again, the route's named after express's wrapper (`middleware - patched`), each handler
 * inside a route once more. Three spans where express 4 has one, and each costs what a span costs
 * on every request (DataDog's tracer had the same double and dropped one: dd-trace-js#6272).
 *
 * So router's stands down where express's spans: on a layer whose handle the express
 * instrumentation wrapped (express patches the Router prototype it shares with `router`, so that
 * holds of a plain router's routes too), and on every layer of an app whose `use` it wrapped —
 * there the route's span holds its handlers, as on express 4. A router used without express keeps
 * router's spans for the layers express did not wrap (a route's handlers), and an app the express
 * instrumentation did not reach keeps all of them. Error handlers keep router's spans everywhere:
 * express's instrumentation does not span them.
 */
export function routerYieldsToExpress(instrumentations: readonly Instrumentation[]): void {
  if (!instrumentations.some((i) => i.instrumentationName === EXPRESS)) return;
  const router = instrumentations.find((i) => i.instrumentationName === ROUTER) as (Instrumentation & Partial<RouterPatcher>) | undefined;
  const patcher = router?._requestHandlerPatcher;
  if (router === undefined || typeof patcher !== 'function' || !ROUTER_TESTED.includes(router.instrumentationVersion)) return;
  const { isWrapped } = otelInstrumentation();
  /** The express instrumentation spans this layer: it wrapped its handle, or the app the request is in. */
  const spannedByExpress = (layer: unknown, req: unknown): boolean =>
    isWrapped((layer as { handle?: unknown } | null | undefined)?.handle) || isWrapped((req as { app?: { use?: unknown } } | null | undefined)?.app?.use);
  router._requestHandlerPatcher = function (this: unknown, original: Handler): Handler {
    const traced = patcher.call(this, original);
    return function handleRequest(this: unknown, req: unknown, _res: unknown, _next: unknown) {
      return (spannedByExpress(this, req) ? original : traced).apply(this, arguments as unknown as unknown[]);
    };
  };
}
