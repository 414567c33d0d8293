/**
 * Changes pyro-run makes to the OpenTelemetry packages it bundles: fixes where an instrumentation's
 * code makes a library behave differently with the agent than without it, where OpenTelemetry's
 * code makes the app's garbage collection costlier, and the hook of the wrap guard
 * (src/tracing/instrumentation-guard.ts) into shimmer. Each is an exact text replacement in one
 * file of one package, applied by the bundle build (vendor-bundles.ts); the build fails when a text
 * is not found exactly once, so an upgrade of the package makes someone look at the change again.
 * docs/compatibility.md lists the fixes for upstream.
 */

export interface SourcePatch {
  /** What goes wrong without it, seen from the app. */
  why: string;
  find: string;
  replace: string;
}

export interface FilePatches {
  /** The package, e.g. `@opentelemetry/instrumentation-router`. */
  package: string;
  /** The file inside the package, as esbuild loads it. */
  file: string;
  patches: readonly SourcePatch[];
}

/**
 * Frames a wrapped call puts between the library's caller and the library's function: the
 * instrumentation's wrapper, and the wrap guard's two around it (`guarded` and `through` in
 * src/tracing/instrumentation-guard.ts).
 */
const WRAPPED_CALL_FRAMES = 3;

/** A response that is an EventEmitter: the instrumentations listen for its 'close'. */
const HAS_ONCE = 'typeof res?.once === "function"';

/**
 * The guard every wrapper goes through: settable, `wrapper(original, name)` until set. Exported on
 * shimmer's module, which the core bundle exposes as WRAP_GUARD_ENTRY (vendor.ts).
 */
const GUARD_SLOT = [
  'let guardWrapper = (wrapper, original, name) => wrapper(original, name);',
  'exports.setWrapGuard = (guard) => { guardWrapper = guard; };',
  // An instrumentation's patch of a whole module that throws: reported, the module left as it is.
  'let patchFailed = (owner, module, error) => { throw error; };',
  'exports.patchFailed = (owner, module, error) => patchFailed(owner, module, error);',
  'exports.setPatchFailed = (report) => { patchFailed = report; };',
].join('\n');

/** `patch` run so that its error is reported through shimmer's patchFailed and the module is returned as it came. */
const guardedPatch = (patch: string, exports: string, module: string) =>
  `try { return ${patch}; } catch (error) { require_shimmer.patchFailed(this.instrumentationName, ${module}, error); return ${exports}; }`;

export const INSTRUMENTATION_PATCHES: readonly FilePatches[] = [
  {
    package: '@opentelemetry/api',
    file: 'dist/context/context.cjs',
    patches: [
      {
        // Measured in docs/performance.md ("What survives a scavenge"): a plain class whose
        // constructor stores closures over `this` on `this` reproduces it without OpenTelemetry.
        why: "every context an instrumentation makes (one or more a request) held its own three closures over itself, and such objects outlive V8's minor collections once the code is optimized: each request's context and all it reaches (its span, the span's attributes) was promoted to the old generation, which made every scavenge copy them (on the big app 5.6 ms a scavenge at the median instead of 1.5, 590 KB promoted instead of 11) and left them for a major collection; the same methods on the prototype",
        find: [
          '\t\tconst self = this;',
          '\t\tself._currentContext = parentContext ? new Map(parentContext) : /* @__PURE__ */ new Map();',
          '\t\tself.getValue = (key) => self._currentContext.get(key);',
          '\t\tself.setValue = (key, value) => {',
          '\t\t\tconst context = new BaseContext(self._currentContext);',
          '\t\t\tcontext._currentContext.set(key, value);',
          '\t\t\treturn context;',
          '\t\t};',
          '\t\tself.deleteValue = (key) => {',
          '\t\t\tconst context = new BaseContext(self._currentContext);',
          '\t\t\tcontext._currentContext.delete(key);',
          '\t\t\treturn context;',
          '\t\t};',
          '\t}',
        ].join('\n'),
        replace: [
          '\t\tthis._currentContext = parentContext ? new Map(parentContext) : /* @__PURE__ */ new Map();',
          '\t}',
          '\tgetValue(key) {',
          '\t\treturn this._currentContext.get(key);',
          '\t}',
          '\tsetValue(key, value) {',
          '\t\tconst context = new BaseContext(this._currentContext);',
          '\t\tcontext._currentContext.set(key, value);',
          '\t\treturn context;',
          '\t}',
          '\tdeleteValue(key) {',
          '\t\tconst context = new BaseContext(this._currentContext);',
          '\t\tcontext._currentContext.delete(key);',
          '\t\treturn context;',
          '\t}',
        ].join('\n'),
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation',
    file: 'dist/shimmer.cjs',
    patches: [
      {
        why: 'an error thrown by an instrumentation\'s wrapper reaches the app (instrumentation-guard.ts)',
        find: 'let logger = console.error.bind(console);',
        replace: `let logger = console.error.bind(console);\n${GUARD_SLOT}`,
      },
      { why: 'the same: the instrumentation that wraps, named in the warning', find: 'const wrap = (nodule, name, wrapper) => {', replace: 'const wrap = (nodule, name, wrapper, owner) => {' },
      { why: 'the same: the wrapper made through the guard', find: 'const wrapped = wrapper(original, name);', replace: 'const wrapped = guardWrapper(wrapper, original, name, owner);' },
    ],
  },
  {
    package: '@opentelemetry/instrumentation',
    file: 'dist/platform/node/instrumentation.cjs',
    patches: [
      {
        why: 'the instrumentation named to the wrap guard',
        find: 'if (!util.types.isProxy(moduleExports)) return require_shimmer.wrap(moduleExports, name, wrapper);',
        replace: 'if (!util.types.isProxy(moduleExports)) return require_shimmer.wrap(moduleExports, name, wrapper, this.instrumentationName);',
      },
      {
        why: 'the same, for a module namespace (ESM)',
        find: 'const wrapped = require_shimmer.wrap(Object.assign({}, moduleExports), name, wrapper);',
        replace: 'const wrapped = require_shimmer.wrap(Object.assign({}, moduleExports), name, wrapper, this.instrumentationName);',
      },
      {
        why: "an instrumentation's patch of a Node module that throws makes the app's require (or import) of it throw",
        find: 'return module.patch(exports);',
        replace: guardedPatch('module.patch(exports)', 'exports', 'module.name'),
      },
      {
        why: 'the same, for a package',
        find: 'return module.patch(exports, module.moduleVersion);',
        replace: guardedPatch('module.patch(exports, module.moduleVersion)', 'exports', 'module.name'),
      },
      {
        why: 'the same, for a file of a package',
        find: 'return file.patch(patchedExports, module.moduleVersion);',
        replace: guardedPatch('file.patch(patchedExports, module.moduleVersion)', 'patchedExports', 'file.name'),
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-router',
    file: 'dist/instrumentation.cjs',
    patches: [
      {
        why: "a router driven with a response that is no EventEmitter (router's and express's own tests, apps that call router.handle): TypeError res.once / res.removeListener is not a function, thrown from the layer or from a setImmediate",
        find: 'if (!spanEnded && !listenerAttached) {',
        replace: `if (!spanEnded && !listenerAttached && ${HAS_ONCE}) {`,
      },
      {
        why: 'the same, when the layer calls next()',
        find: 'if (listenerAttached) res.removeListener("close", onClose);',
        replace: 'if (listenerAttached && typeof res.removeListener === "function") res.removeListener("close", onClose);',
      },
      {
        why: "`next === req.next` inside a handler (express's res.format passes req.next to its callbacks): the router sets req.next to the next it passes; it stays so with the wrapper passed instead, and goes back when the wrapper is called",
        find: 'const ensureFallbackListener = () => {',
        replace: 'if (typeof next === "function" && req.next === next) req.next = wrappedNext;\n\t\tconst ensureFallbackListener = () => {',
      },
      {
        why: 'the same, on the way out',
        find: 'const wrappedNext = (err) => {\n\t\t\tif (err) span.recordException(err);',
        replace: 'const wrappedNext = (err) => {\n\t\t\tif (req.next === wrappedNext) req.next = next;\n\t\t\tif (err && err !== "route" && err !== "router") span.recordException(err);',
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-express',
    file: 'dist/instrumentation.cjs',
    patches: [
      {
        why: 'a layer run with a response that is no EventEmitter: TypeError res.once is not a function, thrown in the layer\'s finally',
        find: 'if (!spanHasEnded) res.once("close", onResponseEnded);',
        replace: `if (!spanHasEnded && ${HAS_ONCE}) res.once("close", onResponseEnded);`,
      },
      {
        why: 'the same, when the layer calls next()',
        find: 'req.res?.removeListener("close", onResponseEnded);',
        replace: 'if (typeof req.res?.removeListener === "function") req.res.removeListener("close", onResponseEnded);',
      },
      {
        why: '`next === req.next` inside a middleware (express\'s res.format): req.next is the wrapper passed while the layer runs, and the next it wraps once the wrapper is called',
        find: 'if (callbackIdx >= 0) arguments[callbackIdx] = function() {',
        replace: 'let wrappedNextFn;\n\t\t\t\tif (callbackIdx >= 0) arguments[callbackIdx] = wrappedNextFn = function wrappedNext() {\n\t\t\t\t\tif (req?.next === wrappedNext) req.next = args[callbackIdx];',
      },
      {
        // From the variable, not read back as `arguments[callbackIdx]`: with that read (this
        // sloppy-mode function also writes `arguments`), every request's objects outlived V8's
        // scavenges on the express app under load — ~1 MB promoted per scavenge against ~70 KB, and
        // ~90 MB more RSS (docs/performance.md, "Memory under load").
        why: 'the same, on the way in',
        find: 'try {\n\t\t\t\t\treturn _opentelemetry_api.context.bind(currentContext, original).apply(this, arguments);',
        replace: 'if (wrappedNextFn !== void 0 && req?.next === args[callbackIdx]) req.next = wrappedNextFn;\n\t\t\t\ttry {\n\t\t\t\t\treturn _opentelemetry_api.context.bind(currentContext, original).apply(this, arguments);',
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-knex',
    file: 'dist/instrumentation.cjs',
    patches: [
      {
        why: "knex's `asyncStackTraces` cut a fixed number of frames (`_asyncStack.lines`) off the stack taken in a raw or schema builder, so the app's call was replaced by the wrapper's frames",
        find: 'const builder = original.apply(this, arguments);\n\t\t\tObject.defineProperty(builder, contextSymbol',
        replace: `const builder = original.apply(this, arguments);\n\t\t\tif (typeof builder?._asyncStack?.lines === "number") builder._asyncStack.lines += ${WRAPPED_CALL_FRAMES};\n\t\t\tObject.defineProperty(builder, contextSymbol`,
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-koa',
    file: 'dist/instrumentation.cjs',
    patches: [
      {
        why: "app.use(null), use(0), use('x'): a TypeError of the instrumentation (reading 'router' of null, a Symbol set on a number) instead of koa's own `middleware must be a function!`",
        find: 'return function use(middlewareFunction) {\n\t\t\tlet patchedFunction;',
        replace: 'return function use(middlewareFunction) {\n\t\t\tif (typeof middlewareFunction !== "function") return original.apply(this, arguments);\n\t\t\tlet patchedFunction;',
      },
    ],
  },
];

/** `source` with each patch applied; throws, naming the file and the patch, when a text is not there exactly once. */
export function patchSource(source: string, file: string, patches: readonly SourcePatch[]): string {
  let patched = source;
  for (const patch of patches) {
    const at = patched.indexOf(patch.find);
    if (at < 0 || patched.indexOf(patch.find, at + 1) >= 0) {
      throw new Error(`${file}: the text to patch (${patch.why}) is ${at < 0 ? 'not there' : 'there more than once'}; the instrumentation changed, revisit build/instrumentation-patches.ts`);
    }
    patched = patched.slice(0, at) + patch.replace + patched.slice(at + patch.find.length);
  }
  return patched;
}
