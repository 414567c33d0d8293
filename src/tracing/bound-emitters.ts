import type { Context } from '@opentelemetry/api';

const http = process.getBuiltinModule('node:http') as typeof import('node:http');

/** What binds a listener to a context: the context manager's `bind`. */
export interface ListenerBinder {
  bind<T>(context: Context, target: T): T;
}

/** A bound emitter: the context its listeners run in, and each listener's bound stand-in per event. */
interface Bound {
  binder: ListenerBinder;
  context: Context;
  listeners: Map<string | symbol, WeakMap<object, unknown>> | undefined;
}

type Method = (this: object, ...args: unknown[]) => unknown;

/**
 * The emitter classes an HTTP instrumentation binds on every request and response (Node's request
 * and response on both sides). OpenTelemetry's context manager binds an emitter by setting eight
 * methods on the instance, each a closure; made hidden (so that `Object.keys(req)` shows nothing
 * of ours), those are eight `defineProperty` calls on every request and every response. For these
 * classes the methods are set once on the class's prototype instead, and an instance is bound by a
 * private field (BoundEmitter): nothing reflection can see is set on it. Every other emitter is
 * bound as OpenTelemetry binds it.
 */
const PER_REQUEST: readonly object[] = [http.IncomingMessage.prototype, http.ServerResponse.prototype, http.ClientRequest.prototype];

const ADD_METHODS = ['addListener', 'on', 'once', 'prependListener', 'prependOnceListener'] as const;
const REMOVE_METHODS = ['removeListener', 'off'] as const;

/**
 * A base whose constructor returns the object it is given: a subclass's private field then lands
 * on that object (the class-fields spec's "return override"). A private field is seen by no
 * reflection — Object.keys, Reflect.ownKeys, a spread, util.inspect — and, unlike a WeakMap entry,
 * lives and dies with the emitter: a WeakMap keyed by short-lived requests keeps each one's entry
 * (its context and listeners) alive through the young generation's collections.
 */
class ReturnsItsArgument {
  constructor(target: object) {
    // biome-ignore lint/correctness/noConstructorReturn: the return override is the point of this class
    return target;
  }
}

/** The binding of an emitter, in a private field of the emitter itself. */
class BoundEmitter extends ReturnsItsArgument {
  #bound: Bound;

  private constructor(emitter: object, state: Bound) {
    super(emitter);
    this.#bound = state;
  }

  static mark(emitter: object, state: Bound): void {
    if (!(#bound in emitter)) new BoundEmitter(emitter, state);
  }

  static of(emitter: object): Bound | undefined {
    return #bound in emitter ? (emitter as BoundEmitter).#bound : undefined;
  }
}

const patched = new WeakSet<object>();
/**
 * Set while a bound listener is being added: `once` adds through `on`, which must not bind the
 * listener `once` already bound (removeListener finds a once-listener by the wrapper it made).
 */
let adding = false;

/** The prototype of `emitter`'s class when it is one bound through its prototype, else undefined. */
function perRequestPrototype(emitter: object): object | undefined {
  for (const prototype of PER_REQUEST) if (Object.prototype.isPrototypeOf.call(prototype, emitter)) return prototype;
  return undefined;
}

/** The method `name` of the prototype above `prototype`, looked up at each call: what it was before ours. */
const inherited = (prototype: object, name: string): Method => (Object.getPrototypeOf(prototype) as Record<string, Method>)[name]!;

/** A method of `name` with the original's name and declared parameters, set hidden on the prototype. */
function define(prototype: object, name: string, method: Method): void {
  Object.defineProperty(method, 'name', { value: name, configurable: true });
  Object.defineProperty(prototype, name, { value: method, writable: true, configurable: true, enumerable: false });
}

function patchPrototype(prototype: object): void {
  for (const name of ADD_METHODS) {
    define(prototype, name, function (this: object, event: unknown, listener: unknown) {
      const original = inherited(prototype, name);
      const state = BoundEmitter.of(this);
      if (state === undefined || adding) return original.call(this, event, listener);
      state.listeners ??= new Map();
      let listeners = state.listeners.get(event as string | symbol);
      if (listeners === undefined) state.listeners.set(event as string | symbol, (listeners = new WeakMap()));
      const stand = state.binder.bind(state.context, listener);
      if (typeof listener === 'function') listeners.set(listener, stand);
      adding = true;
      try {
        return original.call(this, event, stand);
      } finally {
        adding = false;
      }
    } as Method);
  }
  for (const name of REMOVE_METHODS) {
    define(prototype, name, function (this: object, event: unknown, listener: unknown) {
      const listeners = typeof listener === 'function' ? BoundEmitter.of(this)?.listeners?.get(event as string | symbol) : undefined;
      const stand = listeners?.get(listener as object);
      return inherited(prototype, name).call(this, event, stand ?? listener);
    } as Method);
  }
  define(prototype, 'removeAllListeners', function (this: object, event?: unknown) {
    const listeners = BoundEmitter.of(this)?.listeners;
    if (listeners !== undefined) {
      if (arguments.length === 0) listeners.clear();
      else listeners.delete(event as string | symbol);
    }
    return inherited(prototype, 'removeAllListeners').apply(this, arguments as unknown as unknown[]);
  } as Method);
}

/**
 * Binds `emitter`'s listeners, those added from now on, to `context` when it is of a class bound
 * through its prototype, and returns true; false for any other emitter. An emitter bound once keeps
 * its first context, as OpenTelemetry's binding does.
 */
export function bindThroughPrototype(binder: ListenerBinder, context: Context, emitter: object): boolean {
  const prototype = perRequestPrototype(emitter);
  if (prototype === undefined) return false;
  if (!patched.has(prototype)) {
    patchPrototype(prototype);
    patched.add(prototype);
  }
  BoundEmitter.mark(emitter, { binder, context, listeners: undefined });
  return true;
}
