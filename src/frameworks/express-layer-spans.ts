import type { Attributes, Context, Span, Tracer } from '@opentelemetry/api';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import { onResponseClose } from '../tracing/response-close.js';
import { otelApi, otelCore } from '../vendor.js';
import { constructedRoute, matchedRoute } from './express-layer-route.js';

/** Semantic-convention and express attribute names this file reads or writes itself. */
const ATTR_HTTP_ROUTE = 'http.route';
const ATTR_EXPRESS_TYPE = 'express.type';
/** The layer type whose span ends as it starts (the package's `ExpressLayerType.ROUTER`). */
const ROUTER = 'router';
/** What a layer's `next` may be called with that is no error (express's own signals). */
const NEXT_ROUTE = 'route';
const NEXT_ROUTER = 'router';

/**
 * @opentelemetry/instrumentation-express's own functions and markers (its dist/utils.cjs and
 * dist/internal-types.cjs, which the bundle build exposes beside its exports): a layer's span name
 * and attributes, an error's message, the mark of a patched layer, where a request's layer paths
 * are kept — so that the span is the instrumentation's, attribute for attribute.
 */
export interface ExpressUtils {
  getLayerMetadata(route: string, layer: Layer, layerPath?: string): { attributes: Attributes; name: string };
  asErrorAndMessage(error: unknown): [Error | string, string];
}
export interface ExpressInternalTypes {
  kLayerPatched: symbol;
  _LAYERS_STORE_PROPERTY: string;
}

type Handle = (this: unknown, ...args: unknown[]) => unknown;
interface Layer {
  handle: Handle;
  name?: string;
  path?: string;
  [mark: symbol]: unknown;
}
interface LayerRequest {
  originalUrl?: unknown;
  route?: unknown;
  next?: unknown;
  res?: { removeListener?: (event: string, listener: () => void) => unknown };
  [store: string]: unknown;
}
interface LayerResponse {
  once?: (event: string, listener: () => void) => unknown;
}

/** What of ExpressInstrumentation's instance the layer path uses. */
interface ExpressInstance {
  readonly tracer: Tracer;
  _wrap(target: object, name: string, wrapper: (original: Handle) => Handle): void;
}
type InstrumentationClass = new (config?: object) => Instrumentation;

/**
 * ExpressInstrumentation with a lighter path through each layer a request runs; which layers are
 * patched (the app's and routers' `use`, a router's `route`) and their unpatching are the class's
 * own. The span is the one the instrumentation makes — its name and `express.*` attributes (from
 * its own function), `http.route` and the route it gives the HTTP span through the RPC metadata,
 * the exception and status of an error passed to `next` or thrown, its end when the layer calls
 * `next` or the response closes — and the layer runs in its context, `next` in the parent's, as
 * there; the layer paths are kept on the request where the package keeps them. What it leaves out
 * is per-layer work that makes the same values again: the route is computed once a layer, in one
 * pass over the stored paths (express-layer-route.ts), not twice with arrays and regular
 * expressions; the arguments are not copied; contexts are entered without a bound wrapper each;
 * a layer that responds has its span ended by the server path's own end of the response, not by a
 * listener of its own (tracing/response-close.ts). Left out: the config's hooks and ignore lists
 * (`requestHook`, `spanNameHook`, `ignoreLayers`, `ignoreLayersType`), which pyro-run never sets.
 * Kept from pyro-run's fixes to the package's path (docs/compatibility.md): a response with no
 * `once` or `removeListener` is not listened to, and `next === req.next` holds inside a layer.
 */
export function withLeanLayerSpans(Base: InstrumentationClass, utils: ExpressUtils, types: ExpressInternalTypes): InstrumentationClass {
  const api = otelApi();
  const core = otelCore();
  const HTTP = core.RPCType.HTTP;
  const ERROR = api.SpanStatusCode.ERROR;
  const { kLayerPatched, _LAYERS_STORE_PROPERTY: STORE } = types;

  /** The span's exception and status, as the package records an error. */
  const recordError = (span: Span, thrown: unknown): void => {
    const [error, message] = utils.asErrorAndMessage(thrown);
    span.recordException(error);
    span.setStatus({ code: ERROR, message });
  };

  return class ExpressInstrumentation extends Base {
    _applyPatch(layer: Layer, layerPath?: string): void {
      const instrumentation = this as unknown as ExpressInstance;
      if (layer[kLayerPatched] === true) return;
      layer[kLayerPatched] = true;
      instrumentation._wrap(layer, 'handle', (original) => {
        // Error handlers (four parameters) are not spanned, as in the package.
        if (original.length === 4) return original;
        const patched = function (this: unknown, req: LayerRequest, res: LayerResponse) {
          if (!Array.isArray(req[STORE])) Object.defineProperty(req, STORE, { enumerable: false, value: [] });
          const stored = layerPath !== undefined;
          if (stored) (req[STORE] as unknown[]).push(layerPath);
          const store = req[STORE] as unknown[];
          const route = constructedRoute(store);
          const matched = matchedRoute(store, route, req.originalUrl);
          const metadata = utils.getLayerMetadata(route, layer, layerPath);
          const parent = api.context.active();
          const rpc = core.getRPCMetadata(parent);
          if (rpc?.type === HTTP) rpc.route = matched;
          const parentSpan = api.trace.getSpan(parent);
          if (parentSpan === undefined) return original.apply(this, arguments as unknown as unknown[]);
          const span = instrumentation.tracer.startSpan(
            metadata.name,
            { attributes: Object.assign({ [ATTR_HTTP_ROUTE]: matched }, metadata.attributes) },
            parent,
          );
          let current: Context = api.trace.setSpan(parent, span);
          let ended = false;
          if (metadata.attributes[ATTR_EXPRESS_TYPE] === ROUTER) {
            span.end();
            ended = true;
            current = parent;
          }
          const onResponseEnded = (): void => {
            if (ended) return;
            ended = true;
            span.end();
          };
          /** A `close` listener of the layer's own is on the response (not the server path's end of it). */
          let listening = false;
          // The first function among the arguments is the layer's `next`, as the package finds it;
          // the layer is called with its wrapper in that place (express's own call: req, res, next).
          let nextIndex = -1;
          for (let i = 0; i < arguments.length && nextIndex < 0; i++) if (typeof arguments[i] === 'function') nextIndex = i;
          let wrappedNext: Handle | undefined;
          if (nextIndex >= 0) {
            const next = arguments[nextIndex] as Handle;
            wrappedNext = function wrappedNext(this: unknown, ...given: unknown[]) {
              // `next === req.next` inside the layer (express's res.format passes req.next on): the wrapper while the layer runs, `next` again once it is called.
              if (req?.next === wrappedNext) req.next = next;
              const maybeError = given[0];
              const isError = maybeError !== undefined && maybeError !== null && maybeError !== NEXT_ROUTE && maybeError !== NEXT_ROUTER;
              if (!ended) {
                if (isError) recordError(span, maybeError);
                ended = true;
                if (listening && typeof req.res?.removeListener === 'function') req.res.removeListener('close', onResponseEnded);
                span.end();
              }
              if (!(req.route && isError) && stored) (req[STORE] as unknown[]).pop();
              // `next` runs with the parent's span active: the parent's context itself when called from the layer's (same entries), else the active one with that span.
              const active = api.context.active();
              const nextContext = active === current ? parent : api.trace.getSpan(active) === parentSpan ? active : api.trace.setSpan(active, parentSpan);
              return api.context.with(nextContext, next, this, ...given);
            };
            if (req?.next === next) req.next = wrappedNext;
          }
          try {
            if (nextIndex === 2 && arguments.length === 3) return api.context.with(current, original, this, req, res, wrappedNext);
            const args = Array.prototype.slice.call(arguments);
            if (nextIndex >= 0) args[nextIndex] = wrappedNext;
            return api.context.with(current, original, this, ...args);
          } catch (error) {
            recordError(span, error);
            throw error;
          } finally {
            // A layer that neither called `next` nor threw either responded or will later: its span
            // ends with the response — through the server path's own end of it when it spans that
            // response (response-close.ts), else in a listener of its own, as the package's does.
            if (!ended && !onResponseClose(rpc, res, onResponseEnded) && typeof res?.once === 'function') {
              res.once('close', onResponseEnded);
              listening = true;
            }
          }
        };
        // The handle's own properties (a router's stack, its params) read and written through.
        for (const key in original) {
          Object.defineProperty(patched, key, {
            get: () => (original as unknown as Record<string, unknown>)[key],
            set: (value: unknown) => {
              (original as unknown as Record<string, unknown>)[key] = value;
            },
          });
        }
        return patched as Handle;
      });
    }
  };
}
