/**
 * The rule for the OpenTelemetry instrumentations pyro-run bundles: an error of theirs never
 * reaches the app. Every function an instrumentation replaces goes through shimmer's `wrap`
 * (InstrumentationBase's `_wrap` and `_massWrap`); the bundle build routes that through a guard
 * (build/instrumentation-patches.ts) which this module provides.
 *
 * The app calls the guarded wrapper. The instrumentation's wrapper is handed the library's own
 * function as a pass-through that records whether it ran and how it ended. When the wrapper throws:
 * - the very value the library's function threw: the library's own behaviour, it goes on;
 * - before the library's function ran: the instrumentation stands down for this call, the
 *   library's function runs with the same receiver and arguments, and its outcome is the app's;
 * - after the library's function returned: the app gets what it returned;
 * - after the library's function threw one error, the wrapper another: the app gets the library's.
 * Each failure is reported (the caller warns once per instrumentation); later calls stay guarded.
 *
 * Both are plain functions that carry what the library and the app read of the function they
 * stand for — `length`, `name`, own properties, `prototype`, its prototype, `new` — as it would be
 * without the guard (mirror).
 * Errors in callbacks an instrumentation creates per call are out of reach here; those found are
 * fixed in the build (instrumentation-patches.ts).
 */
import { type Logger, reason } from '../log.js';
import { otelShimmer } from '../vendor.js';
import { type AnyFunction, mirror, standIn } from './function-shape.js';

export type WrapperFactory = (original: AnyFunction, name: string) => unknown;
/** shimmer's `wrapper(original, name)`, guarded; `owner` is the instrumentation's name. */
export type WrapGuard = (wrapper: WrapperFactory, original: AnyFunction, name: string, owner?: string) => unknown;
export type OnFailure = (owner: string, name: string, error: unknown) => void;

/** One call of a guarded wrapper: how the library's function ended, once it ran. */
interface Call {
  readonly original: AnyFunction;
  ended: 'returned' | 'threw' | undefined;
  outcome: unknown;
}

/** The guarded call running now, innermost; undefined while a library's own function runs. */
let active: Call | undefined;

function invoke(target: AnyFunction, self: unknown, args: unknown[], newTarget: AnyFunction | undefined): unknown {
  return newTarget === undefined ? Reflect.apply(target, self, args) : Reflect.construct(target, args, newTarget);
}

/**
 * The frames a guarded call puts between the app's call and the library's function: the guard's,
 * the instrumentation's wrapper and what it calls through (context.with …). A library that keeps
 * the stack of the app's call (mysql's long stack traces, Sequelize's and knex's error call sites)
 * takes it inside its function, cut to V8's `Error.stackTraceLimit` (10 by default): every frame
 * of ours there would be one of the app's gone. So while the library's function runs, the limit
 * is raised by that many frames, and the stack it takes holds the app's frames it would hold
 * without the agent, ours beside them. Counted on the first calls of each wrapped function (the
 * most seen), by the stack itself.
 */
interface OurFrames {
  /** The guarded function, once made: the bottom of our frames. */
  guarded: AnyFunction | undefined;
  count: number;
  /** Calls counted so far, up to COUNTED_CALLS. */
  counted: number;
}

/** Calls of each wrapped function whose frames are counted: a wrapper's path can differ between calls (with a parent span or without). */
const COUNTED_CALLS = 3;

/** How many frames lie below `from`'s caller to `to`'s (inclusive of `from`'s own frame, exclusive of `to`'s caller). */
function framesBetween(from: AnyFunction, to: AnyFunction): number {
  const limit = Error.stackTraceLimit;
  const prepare = Error.prepareStackTrace;
  const count = (below: AnyFunction): number => {
    const holder: { stack?: unknown } = {};
    Error.captureStackTrace(holder, below);
    return typeof holder.stack === 'number' ? holder.stack : 0;
  };
  try {
    Error.stackTraceLimit = Infinity;
    Error.prepareStackTrace = (_error, frames) => frames.length;
    return count(from) - count(to) + 1;
  } finally {
    Error.stackTraceLimit = limit;
    Error.prepareStackTrace = prepare;
  }
}

/**
 * The library's function as the wrapper sees it: the same function, recording into its call, and
 * running with the stack limit raised by our frames (OurFrames). It calls the library's function
 * itself (Reflect's calls leave no frame).
 */
function passThrough(original: AnyFunction, ours: OurFrames): AnyFunction {
  const through = mirror(function (this: unknown, ...args: unknown[]) {
    const newTarget = new.target === through ? original : new.target;
    const call = active;
    // A call outside the guarded call that made it (the wrapper calling the library later) records nothing.
    const recording = call !== undefined && call.original === original;
    if (recording) active = undefined;
    const limit = Error.stackTraceLimit;
    let raised: number | undefined;
    // A limit of 0 is an app that wants no stacks: none of ours either.
    if (recording && typeof limit === 'number' && limit > 0 && Number.isFinite(limit)) {
      if (ours.counted < COUNTED_CALLS && ours.guarded !== undefined) {
        ours.counted++;
        ours.count = Math.max(ours.count, framesBetween(through, ours.guarded));
      }
      raised = limit + ours.count;
      Error.stackTraceLimit = raised;
    }
    try {
      const value = newTarget === undefined ? Reflect.apply(original, this, args) : Reflect.construct(original, args, newTarget);
      if (recording) {
        call.ended = 'returned';
        call.outcome = value;
      }
      return value;
    } catch (error) {
      if (recording) {
        call.ended = 'threw';
        call.outcome = error;
      }
      throw error;
    } finally {
      // The app's own change of the limit, made inside the call, stands.
      if (raised !== undefined && Error.stackTraceLimit === raised) Error.stackTraceLimit = limit;
      if (recording) active = call;
    }
  }, original);
  return through;
}

/** The guard shimmer calls in place of `wrapper(original, name)`. */
export function wrapGuard(onFailure: OnFailure): WrapGuard {
  return (wrapper, original, name, owner = 'an instrumentation') => {
    const ours: OurFrames = { guarded: undefined, count: 0, counted: 0 };
    const through = passThrough(original, ours);
    const wrapped = wrapper(through, name);
    // A wrapper factory that declines hands back the original: keep its identity.
    if (wrapped === through) return original;
    if (typeof wrapped !== 'function') return wrapped;
    const fn = wrapped as AnyFunction;
    // The wrapper failed: judged outside the guarded function, whose frame is on every call's stack.
    const recover = (call: Call, error: unknown, self: unknown, args: unknown[], newTarget: AnyFunction | undefined): unknown => {
      if (call.ended === 'threw' && call.outcome === error) throw error;
      onFailure(owner, name, error);
      if (call.ended === 'returned') return call.outcome;
      if (call.ended === 'threw') throw call.outcome;
      active = undefined;
      return invoke(original, self, args, newTarget === guarded ? original : newTarget);
    };
    const guarded: AnyFunction = mirror(
      function (this: unknown, ...args: unknown[]) {
        const outer = active;
        const call: Call = { original, ended: undefined, outcome: undefined };
        active = call;
        try {
          return new.target === undefined ? Reflect.apply(fn, this, args) : Reflect.construct(fn, args, new.target);
        } catch (error) {
          return recover(call, error, this, args, new.target);
        } finally {
          active = outer;
        }
      },
      original,
      fn,
    );
    ours.guarded = guarded;
    return guarded;
  };
}

/**
 * Puts the guard into the bundled shimmer before any instrumentation wraps: a failure is warned
 * once per instrumentation (`quiet`: to the debug log only). An instrumentation whose patch of a
 * whole module throws (the bundle build wraps InstrumentationBase's calls of `patch`) leaves that
 * module as it came, told the same way, instead of making the app's `require` or `import` of it
 * throw. shimmer's own complaints (a function it was asked to wrap is missing in this version of a
 * library) go to debug instead of the app's stderr.
 */
export function guardInstrumentations(log: Logger, quiet: boolean): void {
  const shimmer = otelShimmer();
  const tell = (key: string, message: string) => (quiet ? log.debug(message) : log.warnOnce(key, message));
  shimmer.setWrapGuard(
    wrapGuard((owner, name, error) =>
      tell(`wrap-guard:${owner}`, `${owner} failed in its wrapper of ${name}() (${reason(error)}); that call ran without it, the app is not affected`),
    ),
  );
  shimmer.setPatchFailed((owner, module, error) =>
    tell(`patch-guard:${owner}:${module}`, `${owner} could not instrument ${module} (${reason(error)}); the app uses it as it is, without spans from it`),
  );
  shimmer.setStandIn(standIn);
  shimmer.default({ logger: (message) => log.debug(`shimmer: ${message}`) });
}
