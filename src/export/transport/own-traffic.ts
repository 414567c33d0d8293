import type { Context } from '@opentelemetry/api';
import { otelApi, otelCore } from '../../vendor.js';

/**
 * pyro-run's own requests (the uploads) run in this context. Tracing is suppressed in it, so no
 * instrumentation makes spans of them (the undici instrumentation would trace the span uploads)
 * and they inherit no span of the app's. Suppression stops spans only: the undici
 * instrumentation still records every request it sees in `http.client.request.duration`, so it
 * is also handed `isOwnTraffic` as its `ignoreRequestHook` (tracing/instrumentations.ts); the
 * app's metrics then hold the app's requests, as they would without pyro-run.
 */
export function ownTrafficContext(): Context {
  const api = otelApi();
  return otelCore().suppressTracing(api.ROOT_CONTEXT).setValue(ownTrafficKey(), true);
}

/** Whether the code running now is sending one of pyro-run's own requests. */
export function isOwnTraffic(): boolean {
  return otelApi().context.active().getValue(ownTrafficKey()) === true;
}

let key: symbol | undefined;
const ownTrafficKey = (): symbol => (key ??= otelApi().createContextKey('pyro-run own traffic'));
