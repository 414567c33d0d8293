/**
 * pyro-run's one global: what must be shared by every copy of pyro-run's modules in a thread (the
 * preload's bundle, the app's own `import 'pyro-run'`, a worker's preload), under a single
 * registered symbol. Test runners' leak checks (`@hapi/lab`, mocha's `--check-leaks`) list every
 * global a run adds; this is the one they see of pyro-run's, in every thread alike.
 */
const KEY = Symbol.for('pyro-run');

export interface GlobalState {
  /** An agent was started in this thread (a second preload, or `start()`, does nothing). */
  started?: boolean;
  /** The running agent's span hooks, which `pyroscopeSpanProcessor()` forwards to. */
  spanHooks?: { onStart(span: object, parentContext: unknown): void; onEnd(span: object): void };
  /** The app made a `pyroscopeSpanProcessor()`: the supported way in, so its provider is not reached into. */
  publicProcessorMade?: boolean;
}

export function globalState(): GlobalState {
  const holder = globalThis as { [KEY]?: GlobalState };
  let state = holder[KEY];
  if (state === undefined) {
    state = {};
    Object.defineProperty(globalThis, KEY, { value: state, writable: true, configurable: true, enumerable: false });
  }
  return state;
}
