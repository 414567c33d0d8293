import { subscribeSafely } from '../tracing/library-callbacks.js';
import type { Logger } from '../log.js';
import { otelApi } from '../vendor.js';
import { tellRoute } from './routes.js';

/** fastify 5's tracing channel around each route handler (lib/handle-request.js), published in the request's context. */
const HANDLER_START = 'tracing:fastify.request.handler:start';

/**
 * fastify: no instrumentation of the auto-instrumentations set covers it any more, so every
 * request's root would stay `GET`. fastify publishes each matched route on its handler's tracing
 * channel; the route reaches the request's HTTP span from there (`tellRoute`). No spans of its own,
 * so nothing a request does costs more than one channel message.
 */
export function startFastifyRoutes(log: Logger): void {
  subscribeSafely(HANDLER_START, log, "naming fastify's requests by their routes", (message) => {
    const url = (message as { route?: { url?: unknown } }).route?.url;
    if (typeof url === 'string') tellRoute(otelApi().context.active(), url);
  });
}
