import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import { type Logger, reason } from '../log.js';
import { isPyroscopeSpanProcessor, type SpanHooks } from '../span-link/public-processor.js';

/** A span processor as every OpenTelemetry SDK version calls it. */
export interface AnySpanProcessor extends SpanHooks {
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * - `added`: the processor now sees every span the provider starts, from tracers already handed out too;
 * - `present`: the provider has the app's `pyroscopeSpanProcessor()` already, which forwards to us;
 * - `unsupported`: a provider whose span processors we cannot reach.
 */
export type Attachment = 'added' | 'present' | 'unsupported';

/** The SDK's span processor fan-out (sdk-trace-base 2.x, sdk-trace 3.x: `MultiSpanProcessor`). */
interface FanOut {
  _spanProcessors?: unknown;
}

/**
 * Adds `processor` to a tracer provider the app built. OpenTelemetry JS takes span processors only
 * in the provider's constructor since sdk-trace-base 2.0, but every tracer it hands out calls them
 * through one fan-out object the provider keeps (`_activeSpanProcessor`), which reads its list at
 * each span: ours goes first in a fresh list, so its attribute is on the span before the app's
 * processors see it. Providers of sdk-trace-base 1.x still have `addSpanProcessor`.
 */
export function addSpanProcessor(provider: object, processor: AnySpanProcessor): Attachment {
  const fanOut = (provider as { _activeSpanProcessor?: FanOut })._activeSpanProcessor;
  const list = fanOut?._spanProcessors;
  if (fanOut !== undefined && Array.isArray(list)) {
    if (list.some(isPyroscopeSpanProcessor)) return 'present';
    fanOut._spanProcessors = [processor, ...list];
    return 'added';
  }
  const legacy = provider as { addSpanProcessor?: (p: AnySpanProcessor) => void; _registeredSpanProcessors?: unknown };
  if (typeof legacy.addSpanProcessor === 'function') {
    const registeredList = legacy._registeredSpanProcessors;
    if (Array.isArray(registeredList) && registeredList.some(isPyroscopeSpanProcessor)) return 'present';
    legacy.addSpanProcessor(processor);
    return 'added';
  }
  return 'unsupported';
}

/** The `service.name` of a provider's resource (`_resource` from sdk-trace-base 2.x on, `resource` before). */
export function serviceNameOf(provider: object): string | undefined {
  const holder = provider as { _resource?: { attributes?: Record<string, unknown> }; resource?: { attributes?: Record<string, unknown> } };
  const name = (holder._resource ?? holder.resource)?.attributes?.['service.name'];
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/** Span hooks that call `processors` and never throw into the app's SDK: a failure is said once. */
export function guardedHooks(processors: readonly SpanProcessor[], log: Logger): AnySpanProcessor {
  const failed = (error: unknown) => log.warnOnce('span-hooks', `span linking failed on a span of the app's SDK: ${reason(error)}`);
  return {
    onStart(span, parentContext) {
      for (const processor of processors) {
        try {
          processor.onStart(span as Parameters<SpanProcessor['onStart']>[0], parentContext as Parameters<SpanProcessor['onStart']>[1]);
        } catch (error) {
          failed(error);
        }
      }
    },
    onEnd(span) {
      for (const processor of processors) {
        try {
          processor.onEnd(span as Parameters<SpanProcessor['onEnd']>[0]);
        } catch (error) {
          failed(error);
        }
      }
    },
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
}
