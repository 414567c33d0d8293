import type { ContextManager, TextMapPropagator } from '@opentelemetry/api';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import { otelInstrumentation } from '../vendor.js';

/** Packages an app loads to run a trace SDK of its own (the NodeSDK loads sdk-trace). */
export const TRACE_SDK_PACKAGES = [
  '@opentelemetry/sdk-node',
  '@opentelemetry/sdk-trace-node',
  '@opentelemetry/sdk-trace-base',
  '@opentelemetry/sdk-trace',
] as const;
const API_PACKAGE = '@opentelemetry/api';
/** The API's major: the registry it shares (app-otel/globals.ts) is per major. */
const API_VERSIONS = ['>=1.0.0 <2'];

/** What the app does with OpenTelemetry after pyro-run started, as the watch sees it. */
export interface AppOtelEvents {
  /** The app loaded a trace SDK package (each copy, with its version when known): it is about to build its own tracing. */
  sdkLoaded(pkg: string, version: string | undefined): void;
  /**
   * The app registers its tracer provider, context manager or propagator with the API. Each
   * returns true when it took the registration over (then the app's call reports success), false
   * to let the API's own registration run as it would without pyro-run.
   */
  tracerProvider(provider: object): boolean;
  contextManager(manager: ContextManager): boolean;
  propagator(propagator: TextMapPropagator): boolean;
  /** The app sets a diagnostic logger; its own call then runs as it would without pyro-run. */
  diagLogger(): void;
}

interface ApiExports {
  trace?: object;
  context?: object;
  propagation?: object;
  diag?: object;
}

const WATCHED = Symbol('pyro-run watched');
/** Its instrumentation scope; it makes no spans. */
const WATCH_NAME = 'pyro-run-app-otel-watch';
const WATCH_VERSION = '1';

/**
 * Watches the app's own OpenTelemetry packages as they load, through the same require and import
 * hooks as the instrumentations (an instrumentation of OpenTelemetry itself): each copy of
 * `@opentelemetry/api` the app loads — its CJS and ESM builds are separate singletons — gets its
 * three `setGlobal…` calls routed through `events`, and every trace SDK package loaded is
 * reported with its version. pyro-run's own OpenTelemetry packages are bundled and never load under these names.
 */
export function watchAppOtel(events: AppOtelEvents): Instrumentation {
  const { InstrumentationBase, InstrumentationNodeModuleDefinition } = otelInstrumentation();
  const patchApi = (exports: ApiExports): ApiExports => {
    intercept(exports.trace, 'setGlobalTracerProvider', (value) => events.tracerProvider(value as object));
    intercept(exports.context, 'setGlobalContextManager', (value) => events.contextManager(value as ContextManager));
    intercept(exports.propagation, 'setGlobalPropagator', (value) => events.propagator(value as TextMapPropagator));
    intercept(exports.diag, 'setLogger', () => {
      events.diagLogger();
      return false;
    });
    return exports;
  };
  const sdkLoaded = (pkg: string) => (exports: unknown, version?: string) => {
    events.sdkLoaded(pkg, version);
    return exports;
  };

  class AppOtelWatch extends InstrumentationBase {
    constructor() {
      super(WATCH_NAME, WATCH_VERSION, {});
    }

    protected init() {
      return [
        new InstrumentationNodeModuleDefinition(API_PACKAGE, API_VERSIONS, patchApi),
        ...TRACE_SDK_PACKAGES.map((pkg) => new InstrumentationNodeModuleDefinition(pkg, ['*'], sdkLoaded(pkg))),
      ];
    }
  }
  return new AppOtelWatch();
}

/** Routes `target[method](value, …)` through `takeOver` first; the API's own method runs, with every argument, when it declines. */
function intercept(target: object | undefined, method: string, takeOver: (value: unknown) => boolean): void {
  if (target === undefined) return;
  const holder = target as Record<string, unknown>;
  const original = holder[method];
  if (typeof original !== 'function' || (original as { [WATCHED]?: true })[WATCHED]) return;
  const routed = function (this: unknown, ...args: unknown[]) {
    // The handlers report their own failures; one that throws still must not fail the app's call.
    let taken = false;
    try {
      taken = takeOver(args[0]);
    } catch {
      taken = false;
    }
    return taken ? true : (original as (...values: unknown[]) => unknown).apply(this, args);
  };
  Object.defineProperty(routed, WATCHED, { value: true });
  Object.defineProperty(holder, method, { configurable: true, writable: true, value: routed });
}
