/**
 * What a library and the app read of a function — `name`, `length`, own properties, `prototype`,
 * its own prototype (a class's parent; AsyncFunction's) — kept when something of pyro-run's or of
 * an instrumentation's stands in its place: the wrap guard's functions (instrumentation-guard.ts),
 * an instrumentation's handler in place of the app's (`standIn` of `@opentelemetry/instrumentation`,
 * hooked in by the bundle build), pyro-run's own client hooks (package-hooks.ts).
 */

/** Any function: shimmer wraps whatever a module exports. */
// biome-ignore lint/suspicious/noExplicitAny: any parameters at all; `unknown[]` would refuse functions that declare theirs.
export type AnyFunction = (...args: any[]) => unknown;

/** Own properties a function cannot be given (strict-mode poison pills on some functions). */
const UNCOPIED = new Set<PropertyKey>(['arguments', 'caller']);

function copyOwn(target: AnyFunction, source: AnyFunction, skip: ReadonlySet<PropertyKey> = UNCOPIED): void {
  for (const key of Reflect.ownKeys(source)) {
    if (skip.has(key)) continue;
    const descriptor = Object.getOwnPropertyDescriptor(source, key);
    if (descriptor === undefined) continue;
    try {
      Object.defineProperty(target, key, descriptor);
    } catch {
      // A property the target cannot take (non-configurable on it): the target's own stays.
    }
  }
}

/** The `prototype` every plain function is born with, which says nothing about what it makes. */
function hasBornPrototype(fn: AnyFunction): boolean {
  const prototype = (fn as { prototype?: unknown }).prototype;
  if (typeof prototype !== 'object' || prototype === null || Object.getPrototypeOf(prototype) !== Object.prototype) return false;
  const keys = Reflect.ownKeys(prototype);
  return keys.length === 1 && keys[0] === 'constructor' && (prototype as { constructor: unknown }).constructor === fn;
}

/** What a wrapper's shape may not change of the function it stands for. */
const ORIGINALS_OWN = new Set<PropertyKey>([...UNCOPIED, 'name', 'length']);
/** The same, for a wrapper whose `prototype` is the one it was born with. */
const ORIGINALS_OWN_AND_PROTOTYPE = new Set<PropertyKey>([...ORIGINALS_OWN, 'prototype']);

/**
 * `target`, as read by the library and the app, is `original`: its `name`, `length`, own properties
 * (statics, marks a library reads such as a handler's `_name`), `prototype` and its own prototype
 * (a class's parent; AsyncFunction's, which libraries test through `fn.constructor.name`).
 * Given the `wrapper` an instrumentation made in its place, what the wrapper adds of its own is
 * kept — its statics, and a `prototype` of its own, which `new` builds from — but not its name or
 * length. Without one, `target` keeps nothing of its own that `original` lacks, but what a function
 * cannot lose (a plain function's `prototype`). Plain functions rather than Proxies: V8 calls and
 * inlines them as any other, which it does not for a Proxy in a hot path (a router's per-layer call).
 */
export function mirror<T extends AnyFunction>(target: T, original: AnyFunction, wrapper?: AnyFunction): T {
  if (wrapper === undefined) {
    for (const key of Reflect.ownKeys(target)) {
      if (!Object.hasOwn(original, key)) Reflect.deleteProperty(target, key);
    }
  }
  copyOwn(target, original);
  let parent = Object.getPrototypeOf(original) as object | null;
  if (wrapper !== undefined && wrapper !== original) {
    const skip = hasBornPrototype(wrapper) ? ORIGINALS_OWN_AND_PROTOTYPE : ORIGINALS_OWN;
    copyOwn(target, wrapper, skip);
    if (Object.getPrototypeOf(wrapper) !== Function.prototype) parent = Object.getPrototypeOf(wrapper) as object | null;
  }
  if (Object.getPrototypeOf(target) !== parent) Object.setPrototypeOf(target, parent);
  return target;
}

/**
 * For an instrumentation that puts a function of its own in place of one the app gave a library
 * (a handler, a middleware, a callback): its function, shaped as the app's (`mirror`), so that the
 * library reads the same name, arity, marks and kind of function as without the agent.
 */
export function standIn<T extends AnyFunction>(replacement: T, original: unknown): T {
  if (typeof replacement !== 'function' || typeof original !== 'function' || replacement === original) return replacement;
  return mirror(replacement, original as AnyFunction);
}
