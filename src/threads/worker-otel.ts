import { API_GLOBAL, delegateOf, type Registry } from '../app-otel/globals.js';
import { addSpanProcessor, guardedHooks } from '../app-otel/provider.js';
import type { Logger } from '../log.js';
import type { SpanScope } from '../config/index.js';
import type { LabelRegistry } from '../span-link/labels.js';
import type { LinkContext } from '../span-link/linking.js';
import { SpanLinkProcessor } from '../span-link/processor.js';
import { publishSpanHooks } from '../span-link/public-processor.js';

/**
 * An app that sets up OpenTelemetry inside a worker thread: its spans label the worker's samples,
 * and where one runs it wins over the span a message came with. The worker's agent runs no tracing
 * of its own; it watches the OpenTelemetry API's global registry, where every copy of the API
 * registers (app-otel/globals.ts): the context manager the app registers is linked to the sampler,
 * and the tracer provider gets pyro-run's span processor (app-otel/provider.ts). A provider built
 * with `pyroscopeSpanProcessor()` reaches the same processor through the published hooks.
 *
 * The registry is watched through an accessor on globalThis that reads as absent until the API
 * writes it. So a worker has the same global symbols as the main thread, where pyro-run's tracing
 * registered (test runners compare them, as @hapi/lab's leak check does with a fresh worker's).
 */
export function watchWorkerOtel(registry: LabelRegistry, linkContext: LinkContext, scope: SpanScope, log: Logger): void {
  const hooks = guardedHooks([new SpanLinkProcessor(registry, scope)], log);
  publishSpanHooks(hooks);
  const holder = globalThis as { [API_GLOBAL]?: Registry };
  if (API_GLOBAL in holder) return;
  let stored: Registry | undefined;
  const watched = (value: Registry): Registry =>
    new Proxy(value, {
      set(target, key, slot) {
        const done = Reflect.set(target, key, slot);
        try {
          if (key === 'context' && slot) linkContext(slot as NonNullable<Registry['context']>);
          // The API registers its proxy, then gives it the provider: read once that is done.
          if (key === 'trace' && slot) queueMicrotask(() => attach(slot as Registry['trace']));
        } catch (error) {
          log.warnOnce(
            'worker-otel',
            `could not link the spans of the worker's own OpenTelemetry set-up: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
        return done;
      },
    });
  const attach = (proxy: Registry['trace']): void => {
    const provider = delegateOf(proxy);
    if (provider !== undefined) addSpanProcessor(provider, hooks);
  };
  Object.defineProperty(holder, API_GLOBAL, {
    configurable: true,
    enumerable: true,
    get: () => stored,
    set: (value: unknown) => {
      stored = typeof value === 'object' && value !== null ? watched(value as Registry) : (value as undefined);
    },
  });
}
