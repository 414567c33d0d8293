import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Attributes, DiagLogger, Span, SpanStatusCode, Tracer } from '@opentelemetry/api';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import { otelApi, otelCore } from '../vendor.js';
import { type Peer, plainRequestAttributes, type RequestAttributeParts } from './http-request-attributes.js';
import { closingMetadata, responseClosed } from './response-close.js';

const { errorMonitor } = process.getBuiltinModule('node:events') as typeof import('node:events');

/** Semantic-convention names this file writes itself (those of the request's start are the instrumentation's). */
const ATTR_HTTP_REQUEST_METHOD = 'http.request.method';
const ATTR_URL_SCHEME = 'url.scheme';
const ATTR_NETWORK_PROTOCOL_VERSION = 'network.protocol.version';
const ATTR_HTTP_RESPONSE_STATUS_CODE = 'http.response.status_code';
const ATTR_HTTP_ROUTE = 'http.route';
const ATTR_ERROR_TYPE = 'error.type';

/**
 * @opentelemetry/instrumentation-http's own functions for a server span (its dist/utils.cjs, which
 * the bundle build exposes as HTTP_UTILS_ENTRY): the request's attributes, the status and error
 * type of a response, an error on a span — so that the span is the instrumentation's, attribute for
 * attribute.
 */
export interface HttpUtils {
  getIncomingRequestAttributes(
    request: IncomingMessage,
    options: { component: string; enableSyntheticSourceDetection: boolean; redactedQueryParams?: string[]; hookAttributes?: Attributes },
    logger: DiagLogger,
  ): Attributes;
  getIncomingStableRequestMetricAttributesOnResponse(spanAttributes: Attributes): Attributes;
  parseResponseStatus(kind: number, statusCode: number | undefined): SpanStatusCode;
  parseErrorType(kind: number, statusCode: number | undefined): string | undefined;
  setSpanWithError(span: Span, error: Error): void;
  redactQueryString(query: string, names: readonly string[]): string;
  /** Added by the bundle build (build/instrumentation-patches.ts), as the file reads them. */
  uncachedPeer(socket: unknown): Peer;
  defaultQueryStringsToRedact: readonly string[];
}

/** What of HttpInstrumentation's instance the server path uses. */
interface HttpInstance {
  readonly tracer: Tracer;
  readonly _diag: DiagLogger;
  _recordServerDuration(durationMs: number, attributes: Attributes): void;
}

type Emit = (this: Server, event: string | symbol, ...args: unknown[]) => boolean;
type InstrumentationClass = new (config?: object) => Instrumentation;

/**
 * HttpInstrumentation with a lighter path for each request a server receives; outgoing requests,
 * patching and unpatching, metrics' instruments are the class's own. The span is the one the
 * instrumentation makes — its name (`GET`, then `GET /route` once a framework tells the route
 * through the RPC metadata), attributes (from its own functions), status, error and exception,
 * parent from the propagated headers — and the handler runs in its context with the request and
 * response bound to it, as there. What it leaves out is per-request work that serves settings
 * pyro-run never gives the class (its hooks, header capture, synthetic-source detection,
 * requireParentforIncomingSpans) and the bookkeeping of spans not yet ended in a WeakSet shared by
 * every request, whose entries the garbage collector must visit at every scavenge: each request
 * keeps whether its span ended in its own closure. An error the handler throws is rethrown as it
 * is, a falsy one too (the class's path let `throw null` pass silently). Other spans of the request
 * can end with its response through the RPC metadata, after its own span, without a listener each
 * (response-close.ts; express's layers do).
 */
export function withLeanServerSpans(Base: InstrumentationClass, utils: HttpUtils): InstrumentationClass {
  const api = otelApi();
  const core = otelCore();
  const SERVER = api.SpanKind.SERVER;
  const parts: RequestAttributeParts = { peer: utils.uncachedPeer, redactQuery: utils.redactQueryString, redactedNames: utils.defaultQueryStringsToRedact };

  return class HttpInstrumentation extends Base {
    _incomingRequestFunction(component: 'http' | 'https', original: Emit): Emit {
      const instrumentation = this as unknown as HttpInstance;
      return function incomingRequest(this: Server, event: string | symbol) {
        // Every argument of emit passes through as given.
        const args = arguments;
        if (event !== 'request') return original.apply(this, args as unknown as Parameters<Emit>);
        const request = args[1] as IncomingMessage;
        const response = args[2] as ServerResponse;
        const attributes =
          plainRequestAttributes(request, component, parts) ??
          utils.getIncomingRequestAttributes(request, { component, enableSyntheticSourceDetection: false }, instrumentation._diag);
        const start = performance.now();
        const parent = api.propagation.extract(api.ROOT_CONTEXT, request.headers);
        const span = instrumentation.tracer.startSpan(request.method || 'GET', { kind: SERVER, attributes }, parent);
        const metadata = closingMetadata(core.RPCType.HTTP, span, response);
        const requestContext = core.setRPCMetadata(api.trace.setSpan(parent, span), metadata);

        // The metric's attributes, as the instrumentation's: the request's method, scheme and protocol.
        const measured = (more: Attributes): void => {
          const metricAttributes: Attributes = {
            [ATTR_HTTP_REQUEST_METHOD]: attributes[ATTR_HTTP_REQUEST_METHOD],
            [ATTR_URL_SCHEME]: attributes[ATTR_URL_SCHEME],
          };
          if (attributes[ATTR_NETWORK_PROTOCOL_VERSION]) metricAttributes[ATTR_NETWORK_PROTOCOL_VERSION] = attributes[ATTR_NETWORK_PROTOCOL_VERSION];
          instrumentation._recordServerDuration(performance.now() - start, Object.assign(metricAttributes, more));
        };
        let ended = false;
        const failed = (error: Error): void => {
          ended = true;
          utils.setSpanWithError(span, error);
          span.end();
          measured({ [ATTR_ERROR_TYPE]: error.name });
        };
        const finished = (): void => {
          if (ended) return;
          ended = true;
          const statusCode = response.statusCode;
          const responseAttributes: Attributes = { [ATTR_HTTP_RESPONSE_STATUS_CODE]: statusCode };
          const route = metadata.route;
          if (route !== undefined) responseAttributes[ATTR_HTTP_ROUTE] = route;
          span.setAttributes(responseAttributes).setStatus({ code: utils.parseResponseStatus(SERVER, statusCode) });
          const errorType = utils.parseErrorType(SERVER, statusCode);
          if (errorType !== undefined) span.setAttribute(ATTR_ERROR_TYPE, errorType);
          if (route) span.updateName(`${request.method || 'GET'} ${route}`);
          span.end();
          measured(utils.getIncomingStableRequestMetricAttributesOnResponse(responseAttributes));
        };
        return api.context.with(requestContext, () => {
          api.context.bind(requestContext, request);
          api.context.bind(requestContext, response);
          response.on('close', () => {
            finished();
            responseClosed(metadata);
          });
          response.on(errorMonitor, (error: Error) => {
            if (!ended) failed(error);
          });
          try {
            return original.apply(this, args as unknown as Parameters<Emit>);
          } catch (error) {
            if (error && !ended) failed(error as Error);
            throw error;
          }
        });
      };
    }
  };
}
