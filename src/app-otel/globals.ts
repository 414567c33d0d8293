import type { ContextManager, TextMapPropagator } from '@opentelemetry/api';

/**
 * The OpenTelemetry API's global registry: every copy of @opentelemetry/api in the process (the
 * app's, its ESM and CJS builds, our bundled one) registers its tracer provider, context manager
 * and propagator here, and looks them up here (api: src/internal/global-utils.ts). The first
 * registration of each wins; later ones fail unless the slot was emptied (`disable()`).
 */
export const API_GLOBAL = Symbol.for('opentelemetry.js.api.1');

export interface Registry {
  version?: string;
  /** What `trace.setGlobalTracerProvider` stores: the registering API copy's ProxyTracerProvider. */
  trace?: { getDelegate?: () => object };
  context?: ContextManager;
  propagation?: TextMapPropagator;
  /** What `diag.setLogger` stores. */
  diag?: object;
}

/** What is registered with the OpenTelemetry API right now; absent parts are not registered. */
export interface Registered {
  /** The tracer provider behind the registered proxy. */
  provider?: object;
  contextManager?: ContextManager;
  propagator?: TextMapPropagator;
  /** A diagnostic logger some copy of the API has set (the app's SDK's, OTEL_LOG_LEVEL's). */
  diagLogger?: object;
}

export function registered(): Registered {
  const registry = (globalThis as { [API_GLOBAL]?: Registry })[API_GLOBAL];
  if (registry === undefined) return {};
  return { provider: delegateOf(registry.trace), contextManager: registry.context, propagator: registry.propagation, diagLogger: registry.diag };
}

/**
 * The provider a registered proxy hands out tracers of. The API registers a proxy first and sets
 * its delegate right after; a proxy without one answers with its `NoopTracerProvider` (the API is
 * published unminified, so every copy names the class so).
 */
export function delegateOf(proxy: Registry['trace']): object | undefined {
  if (proxy === undefined) return undefined;
  const delegate = typeof proxy.getDelegate === 'function' ? proxy.getDelegate() : proxy;
  return delegate.constructor?.name === 'NoopTracerProvider' ? undefined : delegate;
}
