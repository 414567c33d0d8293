import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace';
import { otelApi, otelCore } from '../vendor.js';

/**
 * Attributes that name a request's route template: the semantic conventions' (`/users/:id`), and
 * Next.js's, which its spans carry from the first ones of a request on (`/blog/[slug]`) — its own
 * server span learns `http.route` only after the response went out, too late for the HTTP span.
 */
const ROUTE_ATTRIBUTES = ['http.route', 'next.route'] as const;

/**
 * Middleware and mounted-router spans carry `http.route` too, but theirs is the mount path (`/`,
 * `/api`), not the request's route: only the request handler's is. The instrumentations of
 * express, router (express 5), connect and restify say which a span is.
 */
const PARTIAL_ROUTE_SPANS: readonly (readonly [attribute: string, types: readonly string[]])[] = [
  ['express.type', ['middleware', 'router']],
  ['router.type', ['middleware', 'router']],
  ['connect.type', ['middleware']],
  ['restify.type', ['middleware']],
];

/**
 * The route a span's attributes name, if it is a request's. Runs twice for every span (its start
 * and its end), so the common case — no route attribute at all — is two property reads, and
 * nothing is allocated.
 */
export function routeOfAttributes(attributes: Readonly<Record<string, unknown>> | undefined): string | undefined {
  if (attributes === undefined) return undefined;
  let route: string | undefined;
  for (let i = 0; i < ROUTE_ATTRIBUTES.length && route === undefined; i++) {
    const value = attributes[ROUTE_ATTRIBUTES[i]!];
    if (typeof value === 'string' && value !== '') route = value;
  }
  if (route === undefined) return undefined;
  for (let i = 0; i < PARTIAL_ROUTE_SPANS.length; i++) {
    const [attribute, types] = PARTIAL_ROUTE_SPANS[i]!;
    if (types.includes(attributes[attribute] as string)) return undefined;
  }
  return route;
}

/** The name the http instrumentation gives a server span until it knows the route: the method. */
const BARE_METHOD = /^[A-Z]+$/;

/**
 * Tells the HTTP server span of the request running in `context` its route template, the way the
 * express and koa instrumentations do: through the request's RPC metadata, from which the http
 * instrumentation names the span `GET /users/:id` and sets `http.route` when the response ends.
 * The span takes that name now already, so that profile windows cut while the request runs carry
 * it too. Only once (the first router to know wins), and only for the HTTP span of `traceId`.
 */
export function tellRoute(context: Context, route: string, traceId?: string): void {
  const core = otelCore();
  const metadata = core.getRPCMetadata(context);
  if (metadata?.type !== core.RPCType.HTTP || metadata.route !== undefined) return;
  const span = metadata.span as (typeof metadata.span & { name?: unknown }) | undefined;
  if (traceId !== undefined && span?.spanContext().traceId !== traceId) return;
  metadata.route = route;
  if (typeof span?.name === 'string' && BARE_METHOD.test(span.name)) span.updateName(`${span.name} ${route}`);
}

/**
 * A span that knows its request's route — Next.js's own server span, a framework's handler span —
 * tells the request's HTTP span, as it starts if it knows then, else when it ends: the local root
 * (what profiles are labelled with and the report's endpoints are grouped by) is named by the route,
 * as its trace shows it, not `GET`.
 */
export class RouteFromSpans implements SpanProcessor {
  onStart(span: Span, parentContext: Context): void {
    const route = routeOfAttributes((span as unknown as ReadableSpan).attributes);
    if (route !== undefined) tellRoute(parentContext, route, span.spanContext().traceId);
  }

  onEnd(span: ReadableSpan): void {
    const route = routeOfAttributes(span.attributes);
    if (route !== undefined) tellRoute(otelApi().context.active(), route, span.spanContext().traceId);
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
