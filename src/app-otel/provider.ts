import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import { type Logger, reason } from '../log.js';
import { isPyroscopeSpanProcessor, publicProcessorMade, type SpanHooks } from '../span-link/public-processor.js';

/** A span processor as every OpenTelemetry SDK version calls it. */
export interface AnySpanProcessor extends SpanHooks {
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * - `fan-out`: the processor now sees every span the provider starts, from tracers already handed out
 *   too, through the provider's private fan-out (tested on FAN_OUT_TESTED's releases);
 * - `added`: as `fan-out`, through the provider's public `addSpanProcessor` (sdk-trace-base 1.x);
 * - `present`: the app built its provider with `pyroscopeSpanProcessor()`, which forwards to us;
 * - `unsupported`: a provider whose span processors we cannot reach.
 */
export type Attachment = 'fan-out' | 'added' | 'present' | 'unsupported';

/** The SDK's span processor fan-out (sdk-trace-base 2.x, sdk-trace 3.x: `MultiSpanProcessor`). */
interface FanOut {
  _spanProcessors?: unknown;
}

/**
 * Adds `processor` to a tracer provider the app built. The supported way comes first: an app that
 * built its provider with `pyroscopeSpanProcessor()` has ours already (it forwards to the agent),
 * and nothing is added to the provider.
 *
 * Otherwise OpenTelemetry JS takes span processors only in the provider's constructor since
 * sdk-trace-base 2.0, but every tracer it hands out calls them through one fan-out object the
 * provider keeps (`_activeSpanProcessor`, a `MultiSpanProcessor`), which reads its list at each
 * span: ours goes first in a fresh list, so its attribute is on the span before the app's
 * processors see it. That route reads private fields: it is tested on the releases
 * FAN_OUT_TESTED names, and `untestedSdk` tells when the app runs another. Providers of
 * sdk-trace-base 1.x still have the public `addSpanProcessor`.
 */
export function addSpanProcessor(provider: object, processor: AnySpanProcessor): Attachment {
  if (publicProcessorMade()) return 'present';
  const fanOut = (provider as { _activeSpanProcessor?: FanOut })._activeSpanProcessor;
  const list = fanOut?._spanProcessors;
  if (fanOut !== undefined && Array.isArray(list)) {
    if (list.some(isPyroscopeSpanProcessor)) return 'present';
    fanOut._spanProcessors = [processor, ...list];
    return 'fan-out';
  }
  const legacy = provider as { addSpanProcessor?: (p: AnySpanProcessor) => void };
  if (typeof legacy.addSpanProcessor === 'function') {
    legacy.addSpanProcessor(processor);
    return 'added';
  }
  return 'unsupported';
}

/**
 * The trace SDK releases the private fan-out route is tested on, by major: each is loaded by an
 * app of a process test (test/process/own-otel-v2.test.ts: sdk-trace-base and sdk-trace 2.12.1;
 * test/process/own-otel.test.ts: sdk-trace 3.0.0, the NodeSDK's).
 */
export const FAN_OUT_TESTED: Readonly<Record<string, readonly number[]>> = {
  '@opentelemetry/sdk-trace-base': [2],
  '@opentelemetry/sdk-trace': [2, 3],
};

/** The first of `loaded` (package → version) the fan-out route is not tested on, as `name@version`; undefined when all are (or none is known). */
export function untestedSdk(loaded: ReadonlyMap<string, string>): string | undefined {
  for (const [pkg, version] of loaded) {
    const tested = FAN_OUT_TESTED[pkg];
    if (tested !== undefined && !tested.includes(Number.parseInt(version, 10))) return `${pkg}@${version}`;
  }
  return undefined;
}

/** The `service.name` of a provider's resource (`_resource` from sdk-trace-base 2.x on, a read tested with the fan-out route; `resource` before). */
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
