/**
 * The span processor an app puts into its own OpenTelemetry SDK, as the Pyroscope SDKs of other
 * languages have it (`new NodeSDK({ spanProcessors: [pyroscopeSpanProcessor(), …] })`). It holds
 * nothing itself: it forwards to the span processor of the pyro-run agent running in the process
 * (published at boot), and does nothing while none runs — so the same tracing set-up works with and
 * without pyro-run, and whichever of the two starts first.
 */

import { type GlobalState, globalState } from '../util/global-state.js';

/** What the agent publishes: its span linking (and, in local mode, the recording of spans). */
export type SpanHooks = NonNullable<GlobalState['spanHooks']>;

/**
 * Structurally an OpenTelemetry `SpanProcessor` of any SDK version (sdk-trace-base 1.x/2.x,
 * sdk-trace 3.x): the parameters are typed loosely so that it fits each version's own `Span`.
 */
export interface PyroscopeSpanProcessor {
  onStart(span: object, parentContext: unknown): void;
  onEnd(span: object): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** Marks our processor, so the agent does not add its hooks a second time to a provider that has it. */
const BRAND = Symbol.for('pyro-run.span-processor');

/** The running agent's hooks, in pyro-run's global: the app may load its own copy of this module. */
export function publishSpanHooks(hooks: SpanHooks | undefined): void {
  globalState().spanHooks = hooks;
}

export function pyroscopeSpanProcessor(): PyroscopeSpanProcessor {
  const state = globalState();
  state.publicProcessorMade = true;
  return {
    [BRAND]: true,
    onStart(span, parentContext) {
      state.spanHooks?.onStart(span, parentContext);
    },
    onEnd(span) {
      state.spanHooks?.onEnd(span);
    },
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  } as PyroscopeSpanProcessor;
}

/**
 * The app made a `pyroscopeSpanProcessor()` (for its provider): then the agent adds nothing to the
 * app's provider itself. A process builds its trace SDK once; an app that made ours and still
 * built a provider without it is told so by the missing links, as with any processor left out.
 */
export function publicProcessorMade(): boolean {
  return globalState().publicProcessorMade === true;
}

export function isPyroscopeSpanProcessor(processor: unknown): boolean {
  return typeof processor === 'object' && processor !== null && (processor as { [BRAND]?: boolean })[BRAND] === true;
}
