// biome-ignore-all lint/complexity/useArrowFunction: the libraries under test hand out plain functions (with a prototype), not arrows.
/**
 * The wrap guard (src/tracing/instrumentation-guard.ts): what an instrumentation's wrapper does wrong stays
 * ours; what the library does is the app's, exactly. Each case wraps a library function the way
 * shimmer does (`wrapper(original, name)`), through the guard, and calls it as the app would.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import path from 'node:path';
import { standIn } from '../../src/tracing/function-shape.js';
import { type OnFailure, type WrapperFactory, wrapGuard } from '../../src/tracing/instrumentation-guard.js';
import { fixture, registerPath, repoRoot, runNode } from '../support/child.js';
import { scratchDirs } from '../support/scratch.js';

/** The tests' functions take anything. */
// biome-ignore lint/suspicious/noExplicitAny: the functions under test are any library's, with any parameters and results.
type Fn = (...args: any[]) => any;

function guarded(original: Fn, wrapper: WrapperFactory): { fn: Fn; failures: string[] } {
  const failures: string[] = [];
  const onFailure: OnFailure = (owner, name, error) => failures.push(`${owner} ${name}: ${(error as Error).message}`);
  const fn = wrapGuard(onFailure)(wrapper, original, 'doIt', 'instrumentation-x') as Fn;
  return { fn, failures };
}

const bug = () => {
  throw new TypeError('bug of the instrumentation');
};

test("a wrapper that throws before the library ran: the library runs with the same receiver and arguments, its result is the app's, the failure reported", () => {
  const calls: unknown[] = [];
  const receiver = { id: 'receiver' };
  const { fn, failures } = guarded(
    function (this: unknown, a: number, b: number) {
      calls.push([this, a, b]);
      return a + b;
    },
    () =>
      function () {
        bug();
      },
  );
  assert.equal(fn.call(receiver, 2, 3), 5);
  assert.deepEqual(calls, [[receiver, 2, 3]]);
  assert.deepEqual(failures, ['instrumentation-x doIt: bug of the instrumentation']);
});

test("a wrapper that throws before the library ran, and the library throws: the app gets the library's error", () => {
  const own = new RangeError('the library says no');
  const { fn, failures } = guarded(
    () => {
      throw own;
    },
    () => bug,
  );
  assert.throws(
    () => fn(),
    (error) => error === own,
  );
  assert.equal(failures.length, 1);
});

test('a wrapper that throws after the library returned: the app gets what the library returned, the library ran once', () => {
  let runs = 0;
  const result = { rows: [] };
  const { fn, failures } = guarded(
    () => {
      runs++;
      return result;
    },
    (original) =>
      function (this: unknown, ...args: unknown[]) {
        original.apply(this, args);
        bug();
      },
  );
  assert.equal(fn(), result);
  assert.equal(runs, 1);
  assert.equal(failures.length, 1);
});

test("the library's own error through a wrapper that lets it pass (or rethrows it) is the app's, and no failure", () => {
  const own = new Error('ECONNREFUSED');
  const library = () => {
    throw own;
  };
  const passing = guarded(
    library,
    (original) =>
      (...args: unknown[]) =>
        original(...args),
  );
  assert.throws(
    () => passing.fn(),
    (error) => error === own,
  );
  const rethrowing = guarded(library, (original) => (...args: unknown[]) => {
    try {
      return original(...args);
    } catch (error) {
      // biome-ignore lint/complexity/noUselessCatch: a wrapper that catches and rethrows, as instrumentations do.
      throw error;
    }
  });
  assert.throws(
    () => rethrowing.fn(),
    (error) => error === own,
  );
  // A thrown non-object (a string) is the library's too.
  const strings = guarded(
    () => {
      throw 'plain string';
    },
    (original) => () => original(),
  );
  assert.throws(
    () => strings.fn(),
    (error) => error === 'plain string',
  );
  assert.deepEqual([...passing.failures, ...rethrowing.failures, ...strings.failures], []);
});

test("a wrapper that replaces the library's error with one of its own: the app gets the library's", () => {
  const own = new Error('the library');
  const { fn, failures } = guarded(
    () => {
      throw own;
    },
    (original) => () => {
      try {
        original();
      } catch {
        bug();
      }
    },
  );
  assert.throws(
    () => fn(),
    (error) => error === own,
  );
  assert.equal(failures.length, 1);
});

test("what the app reads of the function is the library's: name, length, statics, kind; the wrapper's own additions and prototype stay, new works", () => {
  // biome-ignore lint/complexity/noStaticOnlyClass: a parent class with statics only, as libraries have them.
  class Base {
    static inherited = 'from the parent class';
  }
  class Library extends Base {
    static version = '1.0';
    constructor(
      public readonly value: number,
      public readonly unit = 'm',
    ) {
      super();
    }
  }
  const { fn } = guarded(Library as unknown as Fn, (original) => {
    function Wrapped(this: unknown, value: number) {
      return Reflect.construct(original, [value * 2], new.target ?? Wrapped);
    }
    Wrapped.prototype = original.prototype;
    (Wrapped as unknown as { extra: string }).extra = 'kept';
    return Wrapped;
  });
  assert.equal(fn.name, 'Library');
  assert.equal(fn.length, 1);
  assert.equal((fn as unknown as { version: string }).version, '1.0');
  assert.equal((fn as unknown as { inherited: string }).inherited, 'from the parent class');
  assert.equal((fn as unknown as { extra: string }).extra, 'kept');
  const made = new (fn as unknown as new (value: number) => Library)(21);
  assert.ok(made instanceof Library);
  assert.equal(made.value, 42);
  // shimmer marks what it wrapped on the returned function; the marks read back.
  Object.defineProperty(fn, '__wrapped', { value: true, configurable: true });
  assert.equal((fn as unknown as { __wrapped: boolean }).__wrapped, true);
});

test("a plain function wrapping a method: the method's name, arity and kind (async) are what the app reads, and its prototype (new makes the library's objects) when the wrapper has only the one it was born with", () => {
  async function fetchRows(this: unknown, query: string, limit: number) {
    return [query, limit];
  }
  function Legacy(this: { ready?: boolean }) {
    this.ready = true;
  }
  Legacy.prototype.kind = 'legacy';
  for (const [original, name, length] of [
    [fetchRows, 'fetchRows', 2],
    [Legacy, 'Legacy', 0],
  ] as const) {
    const { fn } = guarded(
      original as Fn,
      (through) =>
        function (this: unknown, ...args: unknown[]) {
          return through.apply(this, args);
        },
    );
    assert.equal(fn.name, name);
    assert.equal(fn.length, length);
    assert.equal(fn.constructor, (original as Fn).constructor);
  }
  // A plain function is born with a prototype it cannot lose; the wrapped async function has none.
  const { fn: legacy } = guarded(
    Legacy as unknown as Fn,
    (through) =>
      function (this: unknown, ...args: unknown[]) {
        return through.apply(this, args);
      },
  );
  assert.equal((legacy as unknown as { prototype: unknown }).prototype, Legacy.prototype);
  const made = new (legacy as unknown as new () => { ready: boolean; kind: string })();
  assert.deepEqual([made.ready, made.kind], [true, 'legacy']);
});

test("standIn: an instrumentation's handler in place of the app's reads as the app's — name, arity, marks, kind — and nothing of its own", async () => {
  const appHandler = async function first(request: unknown, h: unknown) {
    return [request, h];
  };
  (appHandler as unknown as { _name: string })._name = 'first';
  const replacement = function (this: unknown, ...params: unknown[]) {
    return appHandler.apply(this, params as [unknown, unknown]);
  };
  (replacement as unknown as { own: boolean }).own = true;
  const shaped = standIn(replacement, appHandler);
  assert.equal(shaped, replacement);
  assert.deepEqual(
    [shaped.name, shaped.length, shaped.constructor.name, (shaped as unknown as { _name: string })._name, Object.hasOwn(shaped, 'own')],
    ['first', 2, 'AsyncFunction', 'first', false],
  );
  assert.deepEqual(await shaped('req', 'h'), ['req', 'h']);
  // Nothing to shape: what is not a function on either side is handed back as it is.
  const notAFunction = { handle: () => undefined };
  assert.equal(standIn(notAFunction as unknown as Fn, appHandler), notAFunction);
  assert.equal(standIn(replacement, notAFunction), replacement);
});

test('a wrapper factory that hands back the original keeps its identity', () => {
  const original = () => 1;
  const { fn } = guarded(original, (through) => through);
  assert.equal(fn, original);
});

test("a constructor whose wrapper throws before constructing: new gives the library's instance", () => {
  class Library {
    made = true;
  }
  const { fn, failures } = guarded(Library as unknown as Fn, () => {
    return function Wrapped() {
      bug();
    };
  });
  const made = new (fn as unknown as new () => Library)();
  assert.ok(made instanceof Library);
  assert.equal(failures.length, 1);
});

test("a stack taken in the library's function holds the wrapper's frame and two of the guard's before the app's caller (V8 keeps 10 frames; the knex fix counts on 3)", () => {
  function library(): string[] {
    return (new Error('here').stack ?? '').split('\n').map((line) => line.trim());
  }
  const { fn } = guarded(
    library,
    (original) =>
      function instrumentationWrapper(this: unknown, ...args: unknown[]) {
        return (original as Fn).apply(this, args);
      },
  );
  function appCaller(): string[] {
    return fn() as string[];
  }
  const frames = appCaller();
  const at = (name: string) => frames.findIndex((line) => line.startsWith(`at ${name} `));
  assert.ok(at('library') > 0 && at('appCaller') > at('library'), frames.join('\n'));
  const between = frames.slice(at('library') + 1, at('appCaller'));
  assert.equal(between.length, 3, between.join('\n'));
  // The guard's frames carry the names of the functions they stand for.
  assert.equal(between.filter((line) => line.includes('/src/tracing/instrumentation-guard.js:')).length, 2, between.join('\n'));
});

test('nested and recursive guarded calls each judge their own library call', () => {
  const seen: string[] = [];
  // inner: its wrapper fails before the library; outer's library calls inner and then throws its own error.
  const inner = guarded(
    () => {
      seen.push('inner library');
      return 'inner';
    },
    () => bug,
  );
  const own = new Error('outer library');
  const outer = guarded(
    () => {
      seen.push(`outer library got ${inner.fn()}`);
      throw own;
    },
    (original) => () => original(),
  );
  assert.throws(
    () => outer.fn(),
    (error) => error === own,
  );
  assert.deepEqual(seen, ['inner library', 'outer library got inner']);
  assert.equal(inner.failures.length, 1);
  assert.deepEqual(outer.failures, []);

  // A recursive library function (emit calling emit) through one guarded wrapper.
  const depths: number[] = [];
  const recursive = guarded(
    function emit(this: unknown, depth: number): number {
      depths.push(depth);
      return depth === 0 ? 0 : 1 + (recursive.fn as (d: number) => number)(depth - 1);
    },
    (original) => (depth: number) => {
      const value = original(depth);
      if (depth === 1) bug();
      return value;
    },
  );
  assert.equal(recursive.fn(3), 3);
  assert.deepEqual(depths, [3, 2, 1, 0]);
  assert.equal(recursive.failures.length, 1);
});

test('a wrapper that calls the library later, outside the call: nothing is recorded into another call', () => {
  let later: (() => unknown) | undefined;
  const deferred = guarded(
    () => 'deferred library',
    (original) => () => {
      later = () => original();
      return 'scheduled';
    },
  );
  assert.equal(deferred.fn(), 'scheduled');
  // The deferred library call happens inside another guarded call whose wrapper then fails.
  const other = guarded(
    () => 'other library',
    () => () => {
      later?.();
      bug();
    },
  );
  assert.equal(other.fn(), 'other library');
  assert.equal(other.failures.length, 1);
});

test("through pyro-run's bundle: an instrumentation whose patch of a module throws leaves the module as it is, one whose wrapper throws stands down; one warning each, none when quiet", async () => {
  const app = fixture('apps/faulty-instrumentation.cjs');
  const env = { OTEL_BUNDLE: path.join(repoRoot, 'dist/vendor/otel.cjs') };
  // Without the agent's guard, shimmer's hooks behave as upstream's: the app's require throws.
  const bare = runNode([app], { env });
  await bare.exit();
  assert.deepEqual(JSON.parse(bare.stdout), { threw: 'TypeError: cannot patch this shape' });

  const warnings = {
    off: [
      'pyro-run: warning: faulty-instrumentation could not instrument string_decoder (cannot patch this shape); the app uses it as it is, without spans from it',
      'pyro-run: warning: faulty-instrumentation failed in its wrapper of escape() (bug in the wrapper); that call ran without it, the app is not affected',
    ],
    on: [],
  };
  for (const [quiet, expected] of Object.entries(warnings)) {
    const guarded = runNode(['--import', registerPath, app], {
      env: { ...env, PYRO_RUN_OUTPUT_DIR: scratchDirs('pyro-run-guard-').fresh(), PYRO_RUN_QUIET: quiet },
    });
    assert.equal((await guarded.exit()).code, 0, guarded.stderr);
    assert.deepEqual(JSON.parse(guarded.stdout), ['decoded', 'a%20b', 'c%20d']);
    // Not quiet, local mode also prints its notices and summary; quiet, stderr is the app's alone.
    const lines = guarded.stderr.split('\n').filter((line) => line !== '' && (quiet === 'on' || line.startsWith('pyro-run: warning:')));
    assert.deepEqual(lines, expected, `PYRO_RUN_QUIET=${quiet}`);
  }
});
