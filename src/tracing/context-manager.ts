import type { Context } from '@opentelemetry/api';
import { otelContextAsyncHooks } from '../vendor.js';
import { bindThroughPrototype } from './bound-emitters.js';

const { AsyncLocalStorageContextManager } = otelContextAsyncHooks();
const { EventEmitter } = process.getBuiltinModule('node:events') as typeof import('node:events');

type Fn = (this: unknown, ...args: unknown[]) => unknown;
type Wrap = (manager: AsyncContextManager, context: Context, target: Fn) => Fn;

/**
 * Wrappers with 0–6 declared parameters: a wrapper's `length` is the target's (express tells error
 * handlers from middleware by it) without the property being redefined on every bind.
 */
const BY_ARITY: readonly Wrap[] = [
  (m, c, f) =>
    function contextWrapper(this: unknown) {
      return m.with(c, f, this, ...arguments);
    },
  (m, c, f) =>
    function contextWrapper(this: unknown, _a: unknown) {
      return m.with(c, f, this, ...arguments);
    },
  (m, c, f) =>
    function contextWrapper(this: unknown, _a: unknown, _b: unknown) {
      return m.with(c, f, this, ...arguments);
    },
  (m, c, f) =>
    function contextWrapper(this: unknown, _a: unknown, _b: unknown, _c: unknown) {
      return m.with(c, f, this, ...arguments);
    },
  (m, c, f) =>
    function contextWrapper(this: unknown, _a: unknown, _b: unknown, _c: unknown, _d: unknown) {
      return m.with(c, f, this, ...arguments);
    },
  (m, c, f) =>
    function contextWrapper(this: unknown, _a: unknown, _b: unknown, _c: unknown, _d: unknown, _e: unknown) {
      return m.with(c, f, this, ...arguments);
    },
  (m, c, f) =>
    function contextWrapper(this: unknown, _a: unknown, _b: unknown, _c: unknown, _d: unknown, _e: unknown, _f: unknown) {
      return m.with(c, f, this, ...arguments);
    },
];

/**
 * OTel's AsyncLocalStorage context manager with a cheaper `bind` of functions. OTel's wraps the
 * target in a closure that makes another closure at every call, and redefines the wrapper's
 * `length` with Object.defineProperty, where a wrapper of the right arity costs a fraction of
 * that; instrumentations bind several functions on every request (the listeners added to the
 * bound request and response among them), so it shows in a request's CPU (docs/performance.md,
 * "CPU per request"). Behaviour is OTel's: the target runs in `context`, with the call's `this` and
 * arguments, through `with()` (which subclasses extend). Event emitters: Node's HTTP requests and
 * responses through their class's prototype (bound-emitters.ts), any other by OTel's code.
 */
export class AsyncContextManager extends AsyncLocalStorageContextManager {
  override bind<T>(context: Context, target: T): T {
    // An event emitter is tested first, as OTel's bind does: a function can be one.
    if (target instanceof EventEmitter) return bindThroughPrototype(this, context, target) ? target : super.bind(context, target);
    if (typeof target !== 'function') return super.bind(context, target);
    const fn = target as unknown as Fn;
    const wrap = BY_ARITY[fn.length];
    if (wrap) return wrap(this, context, fn) as T;
    const wrapper = BY_ARITY[0]!(this, context, fn);
    Object.defineProperty(wrapper, 'length', { enumerable: false, configurable: true, writable: false, value: fn.length });
    return wrapper as T;
  }
}
