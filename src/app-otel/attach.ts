import type { ContextManager, TextMapPropagator, TracerProvider } from '@opentelemetry/api';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import { type Logger, reason } from '../log.js';
import type { LinkContext } from '../span-link/linking.js';
import { publishSpanHooks } from '../span-link/public-processor.js';
import { otelApi } from '../vendor.js';
import { registered, type Registered } from './globals.js';
import { type AnySpanProcessor, addSpanProcessor, guardedHooks, serviceNameOf, untestedSdk } from './provider.js';
import { loadedVersions, requiredPaths } from './sdk-versions.js';
import type { TracerSwitch } from './tracer-switch.js';
import { TRACE_SDK_PACKAGES, watchAppOtel } from './watch.js';

/** The supported way to link an app's own provider, as the warnings say it. */
const ADD_PUBLIC_PROCESSOR =
  "add pyroscopeSpanProcessor() where it is built: spanProcessors: [pyroscopeSpanProcessor(), ...] with import { pyroscopeSpanProcessor } from 'pyro-run'";

export interface AppOtelOptions {
  /** What the app's tracer provider gets: span linking, and in local mode the recording's span batcher. */
  processors: SpanProcessor[];
  /** Links a context manager to the sampler; undefined where samples carry no links. */
  linkContext: LinkContext | undefined;
  /** Profiles follow the service.name of the app's spans (Grafana joins the two on it). */
  renameService(name: string): void;
  /** Env vars of pyro-run's own span export that were set: once the app's SDK exports spans, they are its to use. */
  exportSettings: readonly string[];
  log: Logger;
}

/** What pyro-run registered with the OpenTelemetry API, and gives up when the app registers its own. */
export interface Own {
  /** Undefined when pyro-run records no spans (nothing to link, export or record). */
  tracers: TracerSwitch | undefined;
  contextManager: ContextManager;
  propagator: TextMapPropagator | undefined;
  instrumentations: readonly Instrumentation[];
  /** Takes pyro-run's diagnostic logger out; undefined when it set none. */
  releaseDiag: (() => void) | undefined;
}

/**
 * Span profiles for an app that sets up OpenTelemetry itself. Its tracer provider, resource,
 * sampler, processors and exporters stay in charge of its spans; pyro-run adds what linking needs:
 * its span processor on that provider, its context binding on the context manager the app
 * registered, and profiles named with the provider's service.name. Two ways in:
 * - the app's SDK registered before pyro-run started (`--require ./tracing.cjs`): `adopt` what
 *   the API's registry holds;
 * - it registers later (started from the main module): `watch` for it. pyro-run's registrations
 *   came first, and the API lets the first one win, so the app's calls are taken over: its context
 *   manager and propagator replace ours, its provider becomes the one every tracer starts spans on
 *   (TracerSwitch), and pyro-run's instrumentations are turned off as soon as the app loads an SDK,
 *   before its own instrumentations patch anything, so no library is instrumented twice.
 */
export class AppOtel {
  private readonly hooks: AnySpanProcessor;
  private readonly providers = new WeakSet<object>();
  /** The trace SDK packages the app loaded, with their versions: whether the fan-out route is tested on them. */
  private readonly sdkVersions = new Map<string, string>();

  constructor(private readonly options: AppOtelOptions) {
    this.hooks = guardedHooks(options.processors, options.log);
    // For an app that builds its provider with pyroscopeSpanProcessor(): it forwards to these.
    publishSpanHooks(this.hooks);
  }

  /** Attaches to what the app registered before pyro-run started; returns what it found. */
  adopt(found: Registered = registered()): Registered {
    if (found.contextManager) this.options.linkContext?.(found.contextManager);
    if (found.provider) {
      try {
        for (const [pkg, version] of loadedVersions(TRACE_SDK_PACKAGES, requiredPaths())) this.sdkVersions.set(pkg, version);
      } catch (error) {
        this.options.log.debug(`could not read the versions of the app's trace SDK: ${reason(error)}`);
      }
      this.attachProvider(found.provider);
    }
    return found;
  }

  /** Takes over the app's registrations when they come after pyro-run's, for as long as ours hold the API's slots. */
  watch(own: Own): void {
    const { log } = this.options;
    const api = otelApi();
    let sdkSeen = false;
    watchAppOtel({
      sdkLoaded: (pkg, version) => {
        if (version !== undefined && !this.sdkVersions.has(pkg)) this.sdkVersions.set(pkg, version);
        if (sdkSeen) return;
        sdkSeen = true;
        // Its SDK's failures are its own to tell, as without pyro-run.
        own.releaseDiag?.();
        for (const instrumentation of own.instrumentations) {
          try {
            instrumentation.disable();
          } catch (error) {
            log.debug(`could not turn off ${instrumentation.instrumentationName}: ${reason(error)}`);
          }
        }
        log.info(`the app loads its own OpenTelemetry SDK (${pkg}): its instrumentations are in charge, pyro-run's ${own.instrumentations.length} are off`);
      },
      tracerProvider: (provider) => {
        const tracers = own.tracers;
        if (tracers === undefined || registered().provider !== tracers || provider === tracers || provider === tracers.current) return false;
        this.attachProvider(provider);
        tracers.switchTo(provider as TracerProvider);
        return true;
      },
      contextManager: (manager) => {
        if (registered().contextManager !== own.contextManager || manager === own.contextManager) return false;
        api.context.disable();
        this.options.linkContext?.(manager);
        return api.context.setGlobalContextManager(manager);
      },
      propagator: (propagator) => {
        if (own.propagator === undefined || registered().propagator !== own.propagator) return false;
        api.propagation.disable();
        return api.propagation.setGlobalPropagator(propagator);
      },
      diagLogger: () => own.releaseDiag?.(),
    });
  }

  private attachProvider(provider: object): void {
    if (this.providers.has(provider)) return;
    this.providers.add(provider);
    const { log } = this.options;
    const attached = addSpanProcessor(provider, this.hooks);
    if (attached === 'unsupported') {
      const kind = provider.constructor?.name ?? 'object';
      log.warnOnce(
        'app-provider',
        `the app's tracer provider (${kind}) takes no span processor once built, so its spans get no profile links; ${ADD_PUBLIC_PROCESSOR}`,
      );
      return;
    }
    let name: string | undefined;
    try {
      name = serviceNameOf(provider);
    } catch (error) {
      log.debug(`could not read the app's service.name: ${reason(error)}`);
    }
    if (name !== undefined) this.options.renameService(name);
    const untested = attached === 'fan-out' ? untestedSdk(this.sdkVersions) : undefined;
    if (untested !== undefined) {
      log.warnOnce(
        'app-provider-untested',
        `the app's tracer provider (${untested}) was given pyro-run's span processor through its internals, which pyro-run is tested on for other releases; if its spans miss profile links, ${ADD_PUBLIC_PROCESSOR}`,
      );
    }
    log.info(
      `the app's own OpenTelemetry SDK handles its spans${name === undefined ? '' : ` (service.name "${name}")`}; pyro-run ${attached === 'present' ? 'found' : 'added'} its span processor there and links the spans to profiles`,
    );
    const settings = this.options.exportSettings;
    if (settings.length > 0) {
      log.warnOnce(
        'app-exports',
        `${settings.join(', ')}: not used by pyro-run for spans — the app's own OpenTelemetry SDK exports them, with its own settings`,
      );
    }
  }
}

/** Our processors as one, for the app's provider: a failure of ours never reaches the app's span calls. */
