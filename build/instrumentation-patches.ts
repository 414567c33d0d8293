/**
 * Changes pyro-run makes to the packages it bundles: fixes where an instrumentation's code makes a
 * library behave differently with the agent than without it, where OpenTelemetry's code makes the
 * app's garbage collection costlier, where a bundled part of undici could touch the app's state, and
 * the hook of the wrap guard (src/tracing/instrumentation-guard.ts) into shimmer. Each is an exact
 * text replacement in one file of one package, applied by the bundle build (vendor-bundles.ts); the
 * build fails when a text is not found exactly once, so an upgrade of the package makes someone
 * look at the change again.
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

/**
 * Where an instrumentation watches an app's emitter for errors: Node's `events.errorMonitor`, whose
 * listeners see every 'error' before the app's and do not count as handling it. A plain 'error'
 * listener does: an error the app left unhandled (a refused connection, a failed query without a
 * callback) no longer throws, and a library that asks whether anyone handles its errors is told yes.
 */
const ERROR_MONITOR = 'require("node:events").errorMonitor';

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
  // A function an instrumentation puts in place of the app's, shaped as the app's.
  'let standIn = (replacement) => replacement;',
  'exports.standIn = (replacement, original) => standIn(replacement, original);',
  'exports.setStandIn = (shape) => { standIn = shape; };',
].join('\n');

/** `patch` run so that its error is reported through shimmer's patchFailed and the module is returned as it came. */
const guardedPatch = (patch: string, exports: string, module: string) =>
  `try { return ${patch}; } catch (error) { require_shimmer.patchFailed(this.instrumentationName, ${module}, error); return ${exports}; }`;

/**
 * Watches an openai APIPromise without parsing it, and returns whether it could: the request through
 * its `responsePromise` (the one the app's handlers then hang on, so a rejection stays the app's to
 * handle or leave unhandled), the body through its `parseResponse`, which the APIPromise calls when
 * the app awaits it, once (openai's core/api-promise.ts, v4 to v6).
 */
const OBSERVE_API_PROMISE = [
  'function isStreamPromise(params, value) {',
  '\treturn Boolean(params?.stream);',
  '}',
  'function observeAPIPromise(apiPromise, onParsed, onError) {',
  '\tif (typeof apiPromise?.parseResponse !== "function" || typeof apiPromise.responsePromise?.then !== "function") return false;',
  '\tlet settled = false;',
  '\tconst failed = (err) => {',
  '\t\tif (settled) return;',
  '\t\tsettled = true;',
  '\t\tonError(err);',
  '\t};',
  '\tapiPromise.responsePromise = apiPromise.responsePromise.then(void 0, (err) => {',
  '\t\tfailed(err);',
  '\t\tthrow err;',
  '\t});',
  '\tconst parseResponse = apiPromise.parseResponse;',
  '\tapiPromise.parseResponse = function(...parseArgs) {',
  '\t\treturn new Promise((resolve) => resolve(parseResponse.apply(this, parseArgs))).then((parsed) => {',
  '\t\t\tif (!settled) {',
  '\t\t\t\tsettled = true;',
  '\t\t\t\ttry {',
  '\t\t\t\t\tonParsed(parsed);',
  '\t\t\t\t} catch (err) {',
  '\t\t\t\t\t_opentelemetry_api.diag.error("openai instrumentation: the parsed response could not be read", err);',
  '\t\t\t\t}',
  '\t\t\t}',
  '\t\t\treturn parsed;',
  '\t\t}, (err) => {',
  '\t\t\tfailed(err);',
  '\t\t\tthrow err;',
  '\t\t});',
  '\t};',
  '\treturn true;',
  '}',
].join('\n');

/**
 * A connection string's URL, parsed once and kept (a few per process: one per pool or knex
 * instance). The pg and knex instrumentations read the database, host and port out of the
 * connection string for every pool checkout (pg) or query (knex), and only read the URL, so one
 * parse serves every span (test/process/connection-strings.test.ts). Inserted after the file's
 * semantic-conventions require.
 */
const SEMCONV_REQUIRE = 'let _opentelemetry_semantic_conventions = require("@opentelemetry/semantic-conventions");';
const CONNECTION_URLS = [
  SEMCONV_REQUIRE,
  'const connectionUrls = new Map();',
  'function connectionUrl(text) {',
  '\tif (typeof text !== "string") return new URL(text);',
  '\tlet url = connectionUrls.get(text);',
  '\tif (url === void 0) {',
  '\t\turl = new URL(text);',
  '\t\tif (connectionUrls.size >= 32) connectionUrls.clear();',
  '\t\tconnectionUrls.set(text, url);',
  '\t}',
  '\treturn url;',
  '}',
].join('\n');
const PARSED_ONCE = 'a connection string parsed again (new URL) for every span';
/** The patch of one call site: the same text with the helper in place of `new URL(`. */
const parsedOnce = (what: string, find: string): SourcePatch => ({ why: `${PARSED_ONCE}: ${what}`, find, replace: find.replace('new URL(', 'connectionUrl(') });

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
    package: '@opentelemetry/context-async-hooks',
    file: 'dist/AsyncLocalStorageContextManager.cjs',
    patches: [
      {
        // An emitter's methods live on its prototype; set on the instance, they are its own
        // enumerable keys: Object.keys(req), a spread or a clone of req, util.inspect all show them.
        why: 'each bound emitter (every request and response, through the http instrumentation) got eight enumerable own methods (on, once, addListener, …, removeAllListeners) and an enumerable symbol: Object.keys(req) and {...req} showed them',
        find: 'const ADD_LISTENER_METHODS = [',
        replace:
          'const ownHidden = (ee, name, value) => Object.defineProperty(ee, name, { value, writable: true, configurable: true, enumerable: false });\nconst ADD_LISTENER_METHODS = [',
      },
      {
        why: 'the same',
        find: 'ee[methodName] = this._patchAddListener(ee, ee[methodName], context);',
        replace: 'ownHidden(ee, methodName, this._patchAddListener(ee, ee[methodName], context));',
      },
      {
        why: 'the same',
        find: 'if (typeof ee.removeListener === "function") ee.removeListener = this._patchRemoveListener(ee, ee.removeListener);\n\t\tif (typeof ee.off === "function") ee.off = this._patchRemoveListener(ee, ee.off);\n\t\tif (typeof ee.removeAllListeners === "function") ee.removeAllListeners = this._patchRemoveAllListeners(ee, ee.removeAllListeners);',
        replace:
          'if (typeof ee.removeListener === "function") ownHidden(ee, "removeListener", this._patchRemoveListener(ee, ee.removeListener));\n\t\tif (typeof ee.off === "function") ownHidden(ee, "off", this._patchRemoveListener(ee, ee.off));\n\t\tif (typeof ee.removeAllListeners === "function") ownHidden(ee, "removeAllListeners", this._patchRemoveAllListeners(ee, ee.removeAllListeners));',
      },
      { why: 'the same', find: 'ee[this._kOtListeners] = map;', replace: 'ownHidden(ee, this._kOtListeners, map);' },
    ],
  },
  {
    package: '@opentelemetry/core',
    file: 'dist/common/attributes.cjs',
    patches: [
      {
        // isAnyValueInternal answers a primitive before it looks at the set it is given: the set
        // only guards against cycles in arrays and objects.
        why: 'every attribute of every span started (startSpan cleans them) allocated a WeakSet to check its value, a string or number almost always: the largest part of starting a span',
        find: 'function isAnyValue(val) {\n\treturn isAnyValueInternal(val, /* @__PURE__ */ new WeakSet());\n}',
        replace:
          'function isAnyValue(val) {\n\tconst type = typeof val;\n\tif (type === "string" || type === "number" || type === "boolean") return true;\n\treturn isAnyValueInternal(val, /* @__PURE__ */ new WeakSet());\n}',
      },
    ],
  },
  {
    package: '@opentelemetry/sdk-trace',
    file: 'dist/platform/node/RandomIdGenerator.cjs',
    patches: [
      {
        // pyro-run's tracer provider has ids of its own (src/tracing/id-generator.ts); this is for
        // any other provider built from the bundled SDK.
        why: 'span and trace ids drawn from Math.random: every span took numbers out of the sequence an app (or its tests) may have seeded',
        find: 'for (let i = 0; i < bytes / 4; i++) SHARED_BUFFER.writeUInt32BE(Math.random() * 2 ** 32 >>> 0, i * 4);',
        replace: 'require("node:crypto").randomFillSync(SHARED_BUFFER, 0, bytes);',
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation',
    file: 'dist/shimmer.cjs',
    patches: [
      {
        why: "an error thrown by an instrumentation's wrapper reaches the app (instrumentation-guard.ts)",
        find: 'let logger = console.error.bind(console);',
        replace: `let logger = console.error.bind(console);\n${GUARD_SLOT}`,
      },
      {
        why: 'the same: the instrumentation that wraps, named in the warning',
        find: 'const wrap = (nodule, name, wrapper) => {',
        replace: 'const wrap = (nodule, name, wrapper, owner) => {',
      },
      {
        why: 'the same: the wrapper made through the guard',
        find: 'const wrapped = wrapper(original, name);',
        replace: 'const wrapped = guardWrapper(wrapper, original, name, owner);',
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation',
    file: 'dist/index.cjs',
    patches: [
      {
        why: "a handler, middleware or callback an instrumentation puts in place of the app's reads as a function of its own: its name, arity and kind (async or not) are lost to the library (restify's and hapi's handler names, connect's arity); the instrumentations' stand-ins go through this export",
        find: 'exports.safeExecuteInTheMiddleAsync = require_utils.safeExecuteInTheMiddleAsync;',
        replace:
          'exports.safeExecuteInTheMiddleAsync = require_utils.safeExecuteInTheMiddleAsync;\nexports.standIn = (replacement, original) => require("./shimmer.cjs").standIn(replacement, original);',
      },
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
        replace:
          'const wrappedNext = (err) => {\n\t\t\tif (req.next === wrappedNext) req.next = next;\n\t\t\tif (err && err !== "route" && err !== "router") span.recordException(err);',
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-pg',
    file: 'dist/utils.cjs',
    patches: [
      { why: `${PARSED_ONCE}: the helper`, find: SEMCONV_REQUIRE, replace: CONNECTION_URLS },
      parsedOnce(
        "each pg-pool.connect span's attributes",
        'function getSemanticAttributesFromPoolConnection(params) {\n\tlet url;\n\ttry {\n\t\turl = params.connectionString ? new URL(params.connectionString) : void 0;',
      ),
      parsedOnce(
        "the connection given to a pool's connection hook",
        'function getConnectionInfoFromPoolConnection(params) {\n\tlet url;\n\ttry {\n\t\turl = params.connectionString ? new URL(params.connectionString) : void 0;',
      ),
    ],
  },
  {
    package: '@opentelemetry/instrumentation-knex',
    file: 'dist/utils.cjs',
    patches: [
      { why: `${PARSED_ONCE}: the helper`, find: SEMCONV_REQUIRE, replace: CONNECTION_URLS },
      parsedOnce("each query's db.namespace", 'return new URL(connectionString).pathname'),
      parsedOnce("each query's server.address", 'return new URL(connectionString).hostname'),
      parsedOnce("each query's server.port", 'const port = new URL(connectionString).port;'),
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
        replace:
          'return function use(middlewareFunction) {\n\t\t\tif (typeof middlewareFunction !== "function") return original.apply(this, arguments);\n\t\t\tlet patchedFunction;',
      },
      {
        why: "each middleware in koa's app.middleware and each function of a @koa/router route on router.stack[i].stack (where route listings and API docs read them) became an anonymous arrow of arity 2, and the app's own function got a property Symbol(koa-layer-patched) set on it; the stand-in rule, the mark kept aside",
        find: 'var KoaInstrumentation = class extends',
        replace: 'const patchedLayers = /* @__PURE__ */ new WeakSet();\nvar KoaInstrumentation = class extends',
      },
      {
        why: 'the same',
        find: 'if (middlewareLayer[require_internal_types.kLayerPatched] === true || require_utils.isLayerIgnored(layerType, this.getConfig())) return middlewareLayer;',
        replace: 'if (patchedLayers.has(middlewareLayer) || require_utils.isLayerIgnored(layerType, this.getConfig())) return middlewareLayer;',
      },
      {
        why: 'the same',
        find: 'middlewareLayer[require_internal_types.kLayerPatched] = true;\n\t\t_opentelemetry_api.diag.debug("patching Koa middleware layer");\n\t\treturn async (context, next) => {',
        replace:
          'patchedLayers.add(middlewareLayer);\n\t\t_opentelemetry_api.diag.debug("patching Koa middleware layer");\n\t\treturn (0, _opentelemetry_instrumentation.standIn)(async (context, next) => {',
      },
      {
        why: 'the same',
        find: '\t\t\t\t\tspan.end();\n\t\t\t\t}\n\t\t\t});\n\t\t};\n\t}\n};',
        replace: '\t\t\t\t\tspan.end();\n\t\t\t\t}\n\t\t\t});\n\t\t}, middlewareLayer);\n\t}\n};',
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-connect',
    file: 'dist/instrumentation.cjs',
    patches: [
      {
        why: "app.use(path, server) and app.use(path, subApp): connect mounts an http.Server by its request listener and a sub-app through its `.handle` (setting the sub-app's `.route`), but it was handed the instrumentation's function instead — a mounted server answered 404, a sub-app's route stayed '/'. connect's own use() goes first; the layer it pushes (a plain function whatever it was given) is instrumented",
        find: 'const middleWare = args[args.length - 1];\n\t\t\tconst routeName = args[args.length - 2] || "";\n\t\t\targs[args.length - 1] = instrumentation._patchMiddleware(routeName, middleWare);\n\t\t\treturn original.apply(this, args);',
        replace: [
          'const routeName = args[args.length - 2] || "";',
          '\t\t\tconst stack = Array.isArray(this?.stack) ? this.stack : void 0;',
          '\t\t\tconst before = stack?.length;',
          '\t\t\tconst result = original.apply(this, args);',
          '\t\t\tconst layer = stack !== void 0 && stack.length === before + 1 ? stack[before] : void 0;',
          '\t\t\tif (typeof layer?.handle === "function") layer.handle = instrumentation._patchMiddleware(routeName, layer.handle);',
          '\t\t\treturn result;',
        ].join('\n'),
      },
      {
        why: "the middleware's name and own properties, as connect and the app read them",
        find: '\t\treturn patchedMiddleware;\n',
        replace: '\t\treturn (0, _opentelemetry_instrumentation.standIn)(patchedMiddleware, middleWare);\n',
      },
      {
        why: "connect's export (createServer) replaced by an anonymous function of no arity",
        find: '_patchConstructor(original) {\n\t\tconst instrumentation = this;\n\t\treturn function(...args) {',
        replace: '_patchConstructor(original) {\n\t\tconst instrumentation = this;\n\t\treturn (0, _opentelemetry_instrumentation.standIn)(function(...args) {',
      },
      { why: 'the same', find: '\t\t\treturn app;\n\t\t};\n', replace: '\t\t\treturn app;\n\t\t}, original);\n' },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-restify',
    file: 'dist/instrumentation.cjs',
    patches: [
      {
        // restify's chain reads a handler's name (`_name`: its per-handler timers, the audit log,
        // route names 'handler-0-first') and its arity: 4 is an error-handling middleware, called as
        // (err, req, res, next) on errors only; ≤ 2 must be an async function (lib/chain.js).
        why: "each handler became an anonymous arrow of arity 3: restify's handler names were lost ('handler-0-first' for 'first', timers under undefined), and an error-handling middleware (arity 4) was called for every request with (req, res, next) instead of on errors",
        find: '\t_handlerPatcher(metadata, handler) {\n',
        replace: [
          '\t_handlerStandIn(handler, patched) {',
          '\t\tconst errorHandling = handler.length === 4;',
          '\t\treturn (0, _opentelemetry_instrumentation.standIn)(function(...args) {',
          '\t\t\tconst [req, res, next] = errorHandling ? args.slice(1) : args;',
          '\t\t\tconst withNext = (nextArg) => errorHandling ? [args[0], req, res, nextArg] : [req, res, nextArg];',
          '\t\t\treturn patched(req, res, next, this, withNext);',
          '\t\t}, handler);',
          '\t}',
          '\t_handlerPatcher(metadata, handler) {\n',
        ].join('\n'),
      },
      {
        why: 'the same',
        find: 'if (typeof handler === "function") return (req, res, next) => {',
        replace: 'if (typeof handler === "function") return this._handlerStandIn(handler, (req, res, next, receiver, withNext) => {',
      },
      {
        why: 'the same',
        find: 'if (this._isDisabled) return handler(req, res, next);',
        replace: 'if (this._isDisabled) return handler.apply(receiver, withNext(next));',
      },
      {
        why: 'the same',
        find: 'if (require_utils.isAsyncFunction(handler)) return wrapPromise(handler(req, res, next));',
        replace: 'if (require_utils.isAsyncFunction(handler)) return wrapPromise(handler.apply(receiver, withNext(next)));',
      },
      { why: 'the same', find: 'const result = handler(req, res, next);', replace: 'const result = handler.apply(receiver, withNext(next));' },
      { why: 'the same', find: '}, this, req, res, patchedNext);\n\t\t};', replace: '}, this, req, res, patchedNext);\n\t\t});' },
      {
        why: "a handler that calls next() before it returns ended its span twice (once in next, once on return): 'You can only call end() on a span once' on the app's stderr",
        find: 'const span = this.tracer.startSpan(spanName, { attributes }, _opentelemetry_api.context.active());',
        replace: [
          'const span = this.tracer.startSpan(spanName, { attributes }, _opentelemetry_api.context.active());',
          '\t\t\tconst endSpan = span.end;',
          '\t\t\tlet spanEnded = false;',
          '\t\t\tspan.end = (...endArgs) => {',
          '\t\t\t\tif (spanEnded) return;',
          '\t\t\t\tspanEnded = true;',
          '\t\t\t\tendSpan.apply(span, endArgs);',
          '\t\t\t};',
        ].join('\n'),
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-hapi',
    file: 'dist/instrumentation.cjs',
    patches: [
      {
        why: "a route whose `options` is a function is called by hapi with the realm's bind context (`server.bind()`) as `this`; the instrumentation's stand-in called it without: Cannot read properties of undefined",
        find: 'route.options = function(server) {\n\t\t\t\tconst options = oldOptions(server);',
        replace: 'route.options = (0, _opentelemetry_instrumentation.standIn)(function(server) {\n\t\t\t\tconst options = oldOptions.call(this, server);',
      },
      { why: 'the same', find: '\t\t\t\treturn options;\n\t\t\t};\n', replace: '\t\t\t\treturn options;\n\t\t\t}, oldOptions);\n' },
      {
        why: "a route handler's name (hapi names it in its errors) and own properties were the instrumentation's anonymous function's",
        find: 'return async function(...params) {',
        replace: 'return (0, _opentelemetry_instrumentation.standIn)(async function(...params) {',
      },
      {
        why: 'the same',
        find: '\t\t\t};\n\t\t};\n\t\tif (typeof route.handler === "function")',
        replace: '\t\t\t}, oldHandler);\n\t\t};\n\t\tif (typeof route.handler === "function")',
      },
      {
        why: 'an extension method (server.ext) was called with `this` undefined instead of the bind context hapi gives it, under its name lost',
        find: 'const newHandler = async function(...params) {',
        replace: 'const newHandler = (0, _opentelemetry_instrumentation.standIn)(async function(...params) {',
      },
      { why: 'the same', find: 'method, void 0, ...params)', replace: 'method, this, ...params)' },
      { why: 'the same', find: '\t\t\t};\n\t\t\treturn newHandler;', replace: '\t\t\t}, method);\n\t\t\treturn newHandler;' },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-http',
    file: 'dist/http.cjs',
    patches: [
      {
        // Node merges a URL (or string) and its options itself, decodes a URL's credentials and
        // takes raw headers as an array (lib/_http_client.js, ClientRequest).
        why: "http.request/get reached Node with the instrumentation's rewrite of its arguments instead of the app's: a URL's percent-encoded password sent undecoded (Basic auth refused), raw headers (an array) turned into {0: name, 1: value}, `protocol` added",
        find: 'if (!optionsParsed.headers) optionsParsed.headers = {};\n\t\t\telse optionsParsed.headers = Object.assign({}, optionsParsed.headers);\n\t\t\t_opentelemetry_api.propagation.inject(requestContext, optionsParsed.headers);',
        replace: [
          'const propagated = {};',
          '\t\t\t_opentelemetry_api.propagation.inject(requestContext, propagated);',
          '\t\t\tconst propagatedNames = Object.keys(propagated);',
          '\t\t\tconst withPropagated = (given) => {',
          '\t\t\t\tif (propagatedNames.length === 0) return given;',
          '\t\t\t\tconst own = Object.assign(Object.create(Object.getPrototypeOf(given)), given);',
          '\t\t\t\tif (Array.isArray(own.headers)) own.headers = [...own.headers, ...propagatedNames.flatMap((name) => [name, propagated[name]])];',
          '\t\t\t\telse own.headers = Object.assign({}, own.headers, propagated);',
          '\t\t\t\treturn own;',
          '\t\t\t};',
          '\t\t\tconst urlForm = typeof options === "string" || options instanceof URL;',
          // A URL-like object that is no URL goes the instrumentation's way: its options rewritten.
          '\t\t\tconst rewritten = !urlForm && require_utils.isURLLike(options);',
          '\t\t\tif (rewritten) optionsParsed.headers = Object.assign({}, optionsParsed.headers, propagated);',
          // What the app passed, the propagation headers added.
          '\t\t\tconst givenArgs = () => rewritten ? void 0 : urlForm ? extraOptions === void 0 && propagatedNames.length === 0 ? [options, ...args] : [options, withPropagated(extraOptions ?? {}), ...args] : [withPropagated(options), ...args];',
        ].join('\n'),
      },
      {
        why: 'the same',
        find: 'if (invalidUrl) return original.apply(this, [options, ...args]);\n\t\t\t\t\telse return original.apply(this, [optionsParsed, ...args]);',
        replace:
          'const given = givenArgs();\n\t\t\t\t\tif (given !== void 0) return original.apply(this, given);\n\t\t\t\t\tif (invalidUrl) return original.apply(this, [options, ...args]);\n\t\t\t\t\telse return original.apply(this, [optionsParsed, ...args]);',
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-http',
    file: 'dist/utils.cjs',
    patches: [
      {
        // Node's net.Socket caches its peer's address (`_peername`) on the first read of
        // `remoteAddress`/`remotePort` while connected; read later, after the socket is gone, it is
        // undefined unless something read it before (lib/net.js, Socket.prototype._getpeername).
        why: "the request's peer address read at request start stayed cached in the socket: after the socket was destroyed, `socket.remoteAddress` read '127.0.0.1' where Node gives undefined (hapi's request.info.remoteAddress)",
        find: 'const getOutgoingRequestAttributesOnResponse = (response) => {',
        // The peer is kept beside the socket instead (a WeakMap of ours): a keep-alive connection's
        // requests read it once, not with a getpeername(2) per read of each property.
        replace: [
          'const peers = new WeakMap();',
          'const uncachedPeer = (socket) => {',
          '\tif (socket == null) return {};',
          '\tconst known = peers.get(socket);',
          '\tif (known !== undefined) return known;',
          '\tconst cached = socket._peername;',
          '\tconst own = Object.prototype.hasOwnProperty.call(socket, "_peername");',
          '\tconst peer = {',
          '\t\tremoteAddress: socket.remoteAddress,',
          '\t\tremotePort: socket.remotePort',
          '\t};',
          '\tif (!cached) {',
          '\t\tif (own) socket._peername = cached;',
          '\t\telse delete socket._peername;',
          '\t}',
          '\tif (peer.remoteAddress !== undefined) peers.set(socket, peer);',
          '\treturn peer;',
          '};',
          'const getOutgoingRequestAttributesOnResponse = (response) => {',
        ].join('\n'),
      },
      {
        why: 'the same, for the response to an outgoing request',
        find: 'const { remoteAddress, remotePort } = socket;',
        replace: 'const { remoteAddress, remotePort } = uncachedPeer(socket);',
      },
      {
        why: 'the same, for the client address',
        find: 'const remote = request.socket.remoteAddress;',
        replace: 'const remote = uncachedPeer(request.socket).remoteAddress;',
      },
      {
        why: 'the same, for an incoming request',
        find: '[_opentelemetry_semantic_conventions.ATTR_NETWORK_PEER_ADDRESS]: request.socket.remoteAddress,\n\t\t[_opentelemetry_semantic_conventions.ATTR_NETWORK_PEER_PORT]: request.socket.remotePort,',
        replace:
          '[_opentelemetry_semantic_conventions.ATTR_NETWORK_PEER_ADDRESS]: peer.remoteAddress,\n\t\t[_opentelemetry_semantic_conventions.ATTR_NETWORK_PEER_PORT]: peer.remotePort,',
      },
      {
        why: 'the same',
        find: 'const remoteClientAddress = getRemoteClientAddress(request);',
        replace: 'const remoteClientAddress = getRemoteClientAddress(request);\n\tconst peer = uncachedPeer(request.socket);',
      },
      {
        // Not a fix: what pyro-run's lighter server path (src/tracing/http-server-spans.ts) reads as
        // this file does, so that its attributes are the instrumentation's.
        why: "the server path's attributes would read the peer and the query parameters to redact otherwise than the instrumentation",
        find: 'exports.setSpanWithError = setSpanWithError;',
        replace:
          'exports.setSpanWithError = setSpanWithError;\nexports.uncachedPeer = uncachedPeer;\nexports.defaultQueryStringsToRedact = defaultQueryStringsToRedact;',
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-pino',
    file: 'dist/instrumentation.cjs',
    patches: [
      {
        why: "pino's export replaced by an anonymous arrow carrying only its enumerable properties: `pino.name` read '' and `pino.length` 0",
        find: 'const patchedPino = Object.assign((...args) => {',
        replace: 'const patchedPino = (0, _opentelemetry_instrumentation.standIn)((...args) => {',
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-lru-memoizer',
    file: 'dist/instrumentation.cjs',
    patches: [
      {
        why: "the memoized function the app gets was a bare function without lru-memoizer's own properties: `memoized.del()`, `.keys()`, `.reset()`, `.on()` threw TypeError, `.hash`, `.load`, `.max` read undefined",
        find: 'const asyncMemoizer = function() {\n\t\t\t\tconst origMemoizer = moduleExports.apply(this, arguments);\n\t\t\t\treturn function() {',
        replace:
          'const standIn = _opentelemetry_instrumentation.standIn;\n\t\t\tconst asyncMemoizer = standIn(function() {\n\t\t\t\tconst origMemoizer = moduleExports.apply(this, arguments);\n\t\t\t\treturn standIn(function() {',
      },
      {
        why: 'the same',
        find: '\t\t\t\t};\n\t\t\t};\n\t\t\tasyncMemoizer.sync = moduleExports.sync;',
        replace: '\t\t\t\t}, origMemoizer);\n\t\t\t}, moduleExports);\n\t\t\tasyncMemoizer.sync = moduleExports.sync;',
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-net',
    file: 'dist/instrumentation.cjs',
    patches: [
      {
        why: "net.connect() or tls.connect() that fails (ECONNREFUSED, ENOTFOUND, a certificate refused) with no 'error' listener of the app's: the instrumentation's own 'error' listeners handled it, so the process went on silently where Node throws (and exits 1)",
        find: 'socket.once("error", otelTlsErrorListener);',
        replace: `socket.once(${ERROR_MONITOR}, otelTlsErrorListener);`,
      },
      {
        why: 'the same',
        find: 'socket.removeListener("error", otelTlsErrorListener);',
        replace: `socket.removeListener(${ERROR_MONITOR}, otelTlsErrorListener);`,
      },
      {
        why: 'the same',
        find: '\t\t\t"close",\n\t\t\t"error",\n\t\t\t"secureConnect"\n\t\t]) socket.once(event, otelTlsRemoveListeners);',
        replace: `\t\t\t"close",\n\t\t\t${ERROR_MONITOR},\n\t\t\t"secureConnect"\n\t\t]) socket.once(event, otelTlsRemoveListeners);`,
      },
      {
        why: 'the same',
        find: 'const SOCKET_EVENTS = [\n\t"close",\n\t"connect",\n\t"error"\n];',
        replace: `const SOCKET_EVENTS = [\n\t"close",\n\t"connect",\n\t${ERROR_MONITOR}\n];`,
      },
      { why: 'the same', find: 'socket.once("error", setSpanError);', replace: `socket.once(${ERROR_MONITOR}, setSpanError);` },
      { why: 'the same', find: 'socket.removeListener("error", setSpanError);', replace: `socket.removeListener(${ERROR_MONITOR}, setSpanError);` },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-mysql',
    file: 'dist/instrumentation.cjs',
    patches: [
      {
        why: "a query without a callback whose error the app does not listen for: mysql re-emits it on the connection (Sequence.hasErrorHandler), but the instrumentation's 'error' listener counted as a handler and the error was dropped",
        find: 'return streamableQuery.on("error", (err) => span.setStatus({',
        replace: `return streamableQuery.on(${ERROR_MONITOR}, (err) => span.setStatus({`,
      },
      {
        why: "a query's callback ran without the Query as `this` (mysql's documented `this.sql` in a query callback read undefined)",
        find: 'return _opentelemetry_api.context.with(parentContext, () => originalCallback(...arguments));',
        replace: 'return _opentelemetry_api.context.with(parentContext, () => originalCallback.apply(this, arguments));',
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-mysql2',
    file: 'dist/instrumentation.cjs',
    patches: [
      {
        why: "a query without a callback whose error the app does not listen for: mysql2 emits 'error' on it, which throws without a listener; the instrumentation's listener swallowed it",
        find: 'streamableQuery.once("error", (err) => {',
        replace: `streamableQuery.once(${ERROR_MONITOR}, (err) => {`,
      },
      {
        why: "a query's callback ran without the Query as `this` (mysql2 calls it as the command's onResult): `this.sql` read undefined",
        find: '\t\t\t\treturn originalCallback(...arguments);',
        replace: '\t\t\t\treturn originalCallback.apply(this, arguments);',
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-tedious',
    file: 'dist/instrumentation.cjs',
    patches: [
      {
        why: "a request's 'error' with no listener of the app's was handled by the instrumentation's",
        find: 'request.once("error", endSpan);',
        replace: `request.once(${ERROR_MONITOR}, endSpan);`,
      },
      { why: 'the same', find: 'request.removeListener("error", endSpan);', replace: `request.removeListener(${ERROR_MONITOR}, endSpan);` },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-socket.io',
    file: 'dist/socket.io.cjs',
    patches: [
      {
        why: "on(event, listener) registered a wrapper of the listener, so off(event, listener) and removeListener found nothing, and a once() listener (Node's wrapper, which removes itself by its own identity) stayed registered for good; a listener that is no function met the instrumentation instead of socket.io",
        find: '\t\t\t\tif (self.getConfig().onIgnoreEventList?.includes(ev)) return original.apply(this, arguments);',
        replace:
          '\t\t\t\tif (self.getConfig().onIgnoreEventList?.includes(ev)) return original.apply(this, arguments);\n\t\t\t\tif (typeof originalListener !== "function") return original.apply(this, arguments);',
      },
      {
        // Node's EventEmitter removes a listener whose `.listener` is the one asked for, and lists
        // it as that (lib/events.js, _removeListener and unwrapListeners).
        why: 'the same',
        find: '\t\t\t\treturn original.apply(this, [ev, wrappedListener]);',
        replace:
          '\t\t\t\t(0, _opentelemetry_instrumentation.standIn)(wrappedListener, originalListener).listener = originalListener;\n\t\t\t\treturn original.apply(this, [ev, wrappedListener]);',
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-dataloader',
    file: 'dist/instrumentation.cjs',
    patches: [
      {
        // DataLoader checks what the batch function returned and says what is wrong with it.
        why: "a batch function that returns no promise (null, a value) or throws: the wrapper called `.then` on what it returned, so DataLoader reported the instrumentation's TypeError (`the function errored synchronously`) in place of its own `did not return a Promise`, and a throwing batch function's span never ended",
        find: '\t\t\t\treturn batchLoadFn.apply(this, args).then((value) => {',
        replace:
          '\t\t\t\tlet result;\n\t\t\t\ttry {\n\t\t\t\t\tresult = batchLoadFn.apply(this, args);\n\t\t\t\t} catch (err) {\n\t\t\t\t\tspan.end();\n\t\t\t\t\tthrow err;\n\t\t\t\t}\n\t\t\t\tif (typeof result?.then !== "function") {\n\t\t\t\t\tspan.end();\n\t\t\t\t\treturn result;\n\t\t\t\t}\n\t\t\t\treturn result.then((value) => {',
      },
      {
        why: "a batch that rejects with undefined: the span's status read `err.message`, and every load() rejected with the instrumentation's TypeError in place of the app's undefined",
        find: '\t\t\t\t\t\tmessage: err.message\n\t\t\t\t\t});\n\t\t\t\t\tspan.end();\n\t\t\t\t\tthrow err;\n\t\t\t\t});\n\t\t\t});\n\t\t};\n\t}\n\t_getPatchedConstructor',
        replace:
          '\t\t\t\t\t\tmessage: err?.message\n\t\t\t\t\t});\n\t\t\t\t\tspan.end();\n\t\t\t\t\tthrow err;\n\t\t\t\t});\n\t\t\t});\n\t\t};\n\t}\n\t_getPatchedConstructor',
      },
      {
        why: 'the same, for load()',
        find: '\t\t\t\t\t\tmessage: err.message\n\t\t\t\t\t});\n\t\t\t\t\tspan.end();\n\t\t\t\t\tthrow err;\n\t\t\t\t});\n\t\t\t\tconst loader = this;',
        replace: '\t\t\t\t\t\tmessage: err?.message\n\t\t\t\t\t});\n\t\t\t\t\tspan.end();\n\t\t\t\t\tthrow err;\n\t\t\t\t});\n\t\t\t\tconst loader = this;',
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-graphql',
    file: 'dist/utils.cjs',
    patches: [
      {
        // graphql's executeSync runs the module's own execute, not the export the instrumentation
        // wraps, so the context carries none of its data (or is undefined); so does a resolver called directly.
        why: "a schema's resolvers stay wrapped after the first execute(): run without the instrumentation's context data — executeSync, a resolver called directly, a context left undefined — they threw TypeError (reading 'Symbol(opentelemetry.graphql_data)'), so executeSync answered every field with an error",
        find: 'if (!contextValue[require_symbols.OTEL_GRAPHQL_DATA_SYMBOL]) return fieldResolver.call(this, source, args, contextValue, info);',
        replace: 'if (!contextValue?.[require_symbols.OTEL_GRAPHQL_DATA_SYMBOL]) return fieldResolver.call(this, source, args, contextValue, info);',
      },
      {
        why: "a resolver wrapped already was wrapped again (the test read the new wrapper, never marked); the mark, a symbol on the app's resolver, is kept aside instead",
        find: 'function wrapFieldResolver(tracer, getConfig, fieldResolver, isDefaultResolver = false) {\n\tif (wrappedFieldResolver[require_symbols.OTEL_PATCHED_SYMBOL] || typeof fieldResolver !== "function") return fieldResolver;',
        replace:
          'const wrappedResolvers = /* @__PURE__ */ new WeakSet();\nfunction wrapFieldResolver(tracer, getConfig, fieldResolver, isDefaultResolver = false) {\n\tif (typeof fieldResolver !== "function" || wrappedResolvers.has(fieldResolver)) return fieldResolver;',
      },
      {
        // Strict, it has no `arguments` and `caller` of its own, and hands the receiver on as it got it.
        why: "the app's resolver read as `wrappedFieldResolver`, of arity 4, a sloppy-mode function",
        find: 'function wrappedFieldResolver(source, args, contextValue, info) {\n',
        replace: 'function wrappedFieldResolver(source, args, contextValue, info) {\n\t\t"use strict";\n',
      },
      {
        why: "a resolver that rejects with undefined (`Promise.reject()`) or throws null: the span's status read `err.message` and threw a TypeError of the instrumentation's, which graphql reported in place of `Unexpected error value: undefined`",
        find: '\t\tmessage: err.message\n\t});\n\tresolveSpan.end();',
        replace: '\t\tmessage: err?.message\n\t});\n\tresolveSpan.end();',
      },
      {
        why: 'the same',
        find: '\twrappedFieldResolver[require_symbols.OTEL_PATCHED_SYMBOL] = true;\n\treturn wrappedFieldResolver;',
        replace:
          '\twrappedResolvers.add(require("@opentelemetry/instrumentation").standIn(wrappedFieldResolver, fieldResolver));\n\treturn wrappedFieldResolver;',
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-grpc',
    file: 'dist/serverUtils.cjs',
    patches: [
      {
        // grpc-js's `respond(err, value, trailer, flags)` (server.ts): the trailer goes out with the
        // status, where the client's 'status' event and call.getTrailer() read it.
        why: "a unary or client-streaming handler's callback lost what follows the reply: `callback(null, reply, trailer)` sent no trailing metadata to the client, and the flags were dropped; the callback also read as an arrow of arity 2 where grpc-js's is `respond` of arity 4",
        find: '\tconst patchedCallback = (err, value) => {',
        replace: '\tconst patchedCallback = require("@opentelemetry/instrumentation").standIn((err, value, ...rest) => {',
      },
      { why: 'the same', find: '\t\treturn callback(err, value);\n\t};', replace: '\t\treturn callback(err, value, ...rest);\n\t}, callback);' },
      {
        // grpc-js calls `handler.func(call, callback)`: `this` is the handler's record ({ func,
        // serialize, deserialize, type, path }), visible to handlers added with server.register().
        why: "a handler ran with `this` an empty object instead of the record grpc-js calls it on (server.register()'s handlers read `this.path`, `this.type`)",
        find: 'return original.call({}, call, patchedCallback);',
        replace: 'return original.call(this, call, patchedCallback);',
      },
      { why: 'the same, for a server-streaming or bidi handler', find: 'return original.call({}, call);', replace: 'return original.call(this, call);' },
      {
        why: 'the same',
        find: 'case "client_stream": return clientStreamAndUnaryHandler(span, call, callback, originalFunc);',
        replace: 'case "client_stream": return clientStreamAndUnaryHandler.call(this, span, call, callback, originalFunc);',
      },
      {
        why: 'the same',
        find: 'case "bidi": return serverStreamAndBidiHandler(span, call, originalFunc);',
        replace: 'case "bidi": return serverStreamAndBidiHandler.call(this, span, call, originalFunc);',
      },
      {
        why: 'the same, for a method left untraced (ignoreGrpcMethods)',
        find: 'case "client_stream": return originalFunc.call({}, call, callback);',
        replace: 'case "client_stream": return originalFunc.call(this, call, callback);',
      },
      { why: 'the same', find: 'case "bidi": return originalFunc.call({}, call);', replace: 'case "bidi": return originalFunc.call(this, call);' },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-grpc',
    file: 'dist/instrumentation.cjs',
    patches: [
      {
        why: 'the same, for a method left untraced: called with the record as `this`',
        find: 'return require_serverUtils.handleUntracedServerFunction(type, originalFunc, call, callback);',
        replace: 'return require_serverUtils.handleUntracedServerFunction.call(self, type, originalFunc, call, callback);',
      },
      {
        // grpc-js installs each rpc on the client's prototype under its name and its original
        // (camelCase) name (make-client.ts), so Channelz's GetChannel is `client.getChannel` too.
        why: "a service with an rpc named GetChannel (gRPC's Channelz): the client span's address was read through `client.getChannel()`, which is that rpc, wrapped — each call recursed until the stack overflowed (the wrap guard then ran the call without the instrumentation, with a warning); grpc-js's own Client.prototype.getChannel is called instead",
        find: '//#region src/instrumentation.ts\nvar GrpcInstrumentation = class',
        replace: [
          '//#region src/instrumentation.ts',
          "/** grpc-js's Client.prototype of each copy hooked: the owner of the client's own getChannel(), which a service's rpc can shadow. */",
          'const grpcClientPrototypes = /* @__PURE__ */ new WeakSet();',
          '/** The channel of `client`, through the Client.prototype of grpc-js it was made from. */',
          'function clientChannel(client) {',
          '\tfor (let owner = Object.getPrototypeOf(client); owner != null; owner = Object.getPrototypeOf(owner)) if (grpcClientPrototypes.has(owner)) return owner.getChannel.call(client);',
          '\treturn client.getChannel();',
          '}',
          'var GrpcInstrumentation = class',
        ].join('\n'),
      },
      {
        why: 'the same',
        find: '\t\t\tthis._wrap(moduleExports.Server.prototype, "register", this._patchServer());',
        replace:
          '\t\t\tgrpcClientPrototypes.add(moduleExports.Client.prototype);\n\t\t\tthis._wrap(moduleExports.Server.prototype, "register", this._patchServer());',
      },
      {
        why: 'the same',
        find: 'const parsedUri = require_utils.URI_REGEX.exec(client.getChannel().getTarget());',
        replace: 'const parsedUri = require_utils.URI_REGEX.exec(clientChannel(client).getTarget());',
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-cucumber',
    file: 'dist/instrumentation.cjs',
    patches: [
      {
        // Gherkin puts a Rule's scenarios among the rule's children, not the feature's.
        why: "a scenario under a `Rule:` was not found among the feature's children: a TypeError (reading 'location' of undefined) rejected the wrapped TestCaseRunner.run, and the whole cucumber run aborted",
        find: 'const scenario = feature.children.find((node) => node?.scenario?.id === pickle.astNodeIds[0])?.scenario;',
        replace:
          'const scenario = feature.children.flatMap((node) => node?.rule ? node.rule.children : [node]).find((node) => node?.scenario?.id === pickle.astNodeIds[0])?.scenario;\n\t\t\t\tif (scenario === void 0) return original.apply(this, args);',
      },
      {
        // cucumber reads a definition's function: its arity says callback or not (a callback-style
        // step whose function returned a promise failed with "function uses multiple asynchronous
        // interfaces"; a `function (testCase, callback)` hook was called with one argument, and
        // cucumber's arity check of hooks was bypassed), and the stack of the Given/When/Then/Before/
        // After call says where it was defined (usage and JSON reports, the messages'
        // sourceReference: it read pyro-run's preload bundle). A failing step's stack, which
        // cucumber cuts at its own first frame, held the wrapper's frames. And a failing step or
        // hook got an attachment of the span's context in cucumber's output and reports. So the
        // app's functions are left as they are: the definition's span is made around cucumber's
        // TestCaseRunner.invokeStep, which runs each step and hook, the same span names and
        // attributes, no attachment.
        why: "step and hook definitions were replaced by wrappers: callback-style steps and hooks failed, definitions were located in pyro-run's bundle, failing steps' stacks and reports held the wrapper's frames and an attachment of the span's context; the functions are cucumber's and the app's now, and the spans are made around TestCaseRunner.invokeStep",
        find: [
          '\t\t\tsteps.forEach((step) => {',
          '\t\t\t\tif ((0, _opentelemetry_instrumentation.isWrapped)(moduleExports[step])) this._unwrap(moduleExports, step);',
          '\t\t\t\tthis._wrap(moduleExports, step, this._getStepPatch(step));',
          '\t\t\t});',
          '\t\t\thooks.forEach((hook) => {',
          '\t\t\t\tif ((0, _opentelemetry_instrumentation.isWrapped)(moduleExports[hook])) this._unwrap(moduleExports, hook);',
          '\t\t\t\tthis._wrap(moduleExports, hook, this._getHookPatch(hook));',
          '\t\t\t});',
          '\t\t\treturn moduleExports;',
          '\t\t}, (moduleExports) => {',
          '\t\t\tif (moduleExports === void 0) return;',
          '\t\t\t[...hooks, ...steps].forEach((method) => {',
          '\t\t\t\tthis._unwrap(moduleExports, method);',
          '\t\t\t});',
          '\t\t}, [',
        ].join('\n'),
        replace: '\t\t\treturn moduleExports;\n\t\t}, () => {}, [',
      },
      {
        why: 'the same',
        find: '\t\t\t\tif ("runAttempt" in moduleExports.default.prototype) this._unwrap(moduleExports.default.prototype, "runAttempt");\n\t\t\t}',
        replace:
          '\t\t\t\tif ("runAttempt" in moduleExports.default.prototype) this._unwrap(moduleExports.default.prototype, "runAttempt");\n\t\t\t\tif ("invokeStep" in moduleExports.default.prototype) this._unwrap(moduleExports.default.prototype, "invokeStep");\n\t\t\t}',
      },
      {
        why: 'the same',
        find: '\t\t\tif ("runAttempt" in moduleExports.default.prototype) this._wrap(moduleExports.default.prototype, "runAttempt", this._getTestCaseRunAttemptPatch());\n\t\t\treturn moduleExports;',
        replace:
          '\t\t\tif ("runAttempt" in moduleExports.default.prototype) this._wrap(moduleExports.default.prototype, "runAttempt", this._getTestCaseRunAttemptPatch());\n\t\t\tif ("invokeStep" in moduleExports.default.prototype) this._wrap(moduleExports.default.prototype, "invokeStep", this._getInvokeStepPatch());\n\t\t\treturn moduleExports;',
      },
      {
        why: 'the same',
        find: '\t\t\tif ("runAttempt" in moduleExports.default.prototype) this._unwrap(moduleExports.default.prototype, "runAttempt");\n\t\t})])];',
        replace:
          '\t\t\tif ("runAttempt" in moduleExports.default.prototype) this._unwrap(moduleExports.default.prototype, "runAttempt");\n\t\t\tif ("invokeStep" in moduleExports.default.prototype) this._unwrap(moduleExports.default.prototype, "invokeStep");\n\t\t})])];',
      },
      {
        why: 'the same',
        find: '\t_getHookPatch(name) {',
        replace: [
          // invokeStep(step, definition, hookParameter): a step with its step definition, or null and a hook's definition.
          '\t_getInvokeStepPatch() {',
          '\t\tconst instrumentation = this;',
          '\t\treturn function(original) {',
          '\t\t\treturn function invokeStep(step, definition, hookParameter) {',
          '\t\t\t\tif (!instrumentation.isEnabled() || definition == null) return original.apply(this, arguments);',
          '\t\t\t\tconst library = this.supportCodeLibrary;',
          // The span names the function the definition was made with, as the wrappers of Given … After did; defineStep() had none.
          '\t\t\t\tconst name = step != null ? steps.includes(definition.keyword) ? `${definition.keyword}(${String(definition.pattern)})` : void 0 : library?.beforeTestCaseHookDefinitions?.includes(definition) ? "Before" : library?.afterTestCaseHookDefinitions?.includes(definition) ? "After" : library?.beforeTestStepHookDefinitions?.includes(definition) ? "BeforeStep" : library?.afterTestStepHookDefinitions?.includes(definition) ? "AfterStep" : void 0;',
          '\t\t\t\tif (name === void 0) return original.apply(this, arguments);',
          '\t\t\t\treturn instrumentation.tracer.startActiveSpan(name, { kind: _opentelemetry_api.SpanKind.CLIENT }, (span) => {',
          // A step's arguments, as cucumber passes them to the step's function, recorded as the wrapper did.
          '\t\t\t\t\tconst traced = step == null || typeof definition.getInvocationParameters !== "function" ? definition : Object.create(definition, { getInvocationParameters: {',
          '\t\t\t\t\t\tconfigurable: true,',
          '\t\t\t\t\t\twritable: true,',
          '\t\t\t\t\t\tvalue: async function(...options) {',
          '\t\t\t\t\t\t\tconst data = await definition.getInvocationParameters.apply(this, options);',
          '\t\t\t\t\t\t\tif (Array.isArray(data?.parameters)) span.setAttributes(data.parameters.reduce((attrs, arg, index) => ({',
          '\t\t\t\t\t\t\t\t...attrs,',
          '\t\t\t\t\t\t\t\t[`cucumber.step.args[${index}]`]: arg?.raw instanceof Function ? JSON.stringify(arg.raw()) : arg',
          '\t\t\t\t\t\t\t}), {}));',
          '\t\t\t\t\t\t\treturn data;',
          '\t\t\t\t\t\t}',
          '\t\t\t\t\t} });',
          '\t\t\t\t\tconst ended = (outcome) => {',
          '\t\t\t\t\t\tif (outcome?.error != null) CucumberInstrumentation.setSpanToError(span, outcome.error);',
          '\t\t\t\t\t\tspan.end();',
          '\t\t\t\t\t\treturn outcome;',
          '\t\t\t\t\t};',
          '\t\t\t\t\tlet running;',
          '\t\t\t\t\ttry {',
          '\t\t\t\t\t\trunning = original.apply(this, [step, traced, ...Array.prototype.slice.call(arguments, 2)]);',
          '\t\t\t\t\t} catch (error) {',
          '\t\t\t\t\t\tended({ error });',
          '\t\t\t\t\t\tthrow error;',
          '\t\t\t\t\t}',
          '\t\t\t\t\tif (typeof running?.then !== "function") return ended(running);',
          '\t\t\t\t\treturn running.then(ended, (error) => {',
          '\t\t\t\t\t\tended({ error });',
          '\t\t\t\t\t\tthrow error;',
          '\t\t\t\t\t});',
          '\t\t\t\t});',
          '\t\t\t};',
          '\t\t};',
          '\t}',
          '\t_getHookPatch(name) {',
        ].join('\n'),
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-redis',
    file: 'dist/v4-v5/instrumentation.cjs',
    patches: [
      {
        // A promise with a rejection handler is handled: V8 reports no unhandled rejection for it.
        // The app gets the promise the handlers return, which settles as the command's did.
        why: "a command's promise got the instrumentation's rejection handler: a failed command the app did not catch no longer raised an unhandled rejection (the process ran on where Node ends it, exit 1)",
        find: 'if (typeof res?.then === "function") res.then((redisRes) => {\n\t\t\tthis._endSpanWithResponse(span, commandName, commandArgs, redisRes, void 0);\n\t\t}, (err) => {\n\t\t\tthis._endSpanWithResponse(span, commandName, commandArgs, null, err);\n\t\t});',
        replace:
          'if (typeof res?.then === "function") return res.then((redisRes) => {\n\t\t\tthis._endSpanWithResponse(span, commandName, commandArgs, redisRes, void 0);\n\t\t\treturn redisRes;\n\t\t}, (err) => {\n\t\t\tthis._endSpanWithResponse(span, commandName, commandArgs, null, err);\n\t\t\tthrow err;\n\t\t});',
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-dns',
    file: 'dist/instrumentation.cjs',
    patches: [
      {
        why: "dns.promises.lookup()'s promise got the instrumentation's rejection handler: a failed lookup the app did not catch no longer raised an unhandled rejection (the process exited 0 where Node ends it with 1)",
        find: 'promise.then((result) => {\n\t\t\t\t\trequire_utils.setLookupAttributes(span, result);\n\t\t\t\t\tspan.end();\n\t\t\t\t}, (e) => {\n\t\t\t\t\trequire_utils.setError(e, span);\n\t\t\t\t\tspan.end();\n\t\t\t\t});\n\t\t\t\treturn promise;',
        replace:
          'return promise.then((result) => {\n\t\t\t\t\trequire_utils.setLookupAttributes(span, result);\n\t\t\t\t\tspan.end();\n\t\t\t\t\treturn result;\n\t\t\t\t}, (e) => {\n\t\t\t\t\trequire_utils.setError(e, span);\n\t\t\t\t\tspan.end();\n\t\t\t\t\tthrow e;\n\t\t\t\t});',
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-openai',
    file: 'dist/instrumentation.cjs',
    patches: [
      {
        // openai's APIPromise parses the body when it is first awaited (then/catch/finally), once:
        // the instrumentation's eager .then() parsed it itself (core/api-promise.ts).
        why: "each chat completion, embeddings or response call had its body read by the instrumentation (its .then on the APIPromise), so `chat.completions.parse()` and `.asResponse()` then failed 'Body is unusable: Body has already been read'; its .catch made a failed call the app neither awaited nor caught a handled rejection (the process ran on, exit 0, where Node ends it, exit 1); `responses.create({ stream: true })` returned a plain Promise without `.withResponse()`/`.asResponse()`. The app gets the SDK's APIPromise; the instrumentation watches the request through its responsePromise (a rejection passed on, still the app's to handle) and the body through its parseResponse, when the app parses: so a call read only through `.asResponse()` leaves its span unended (not exported)",
        find: 'function isStreamPromise(params, value) {\n\treturn Boolean(params?.stream);\n}',
        replace: OBSERVE_API_PROMISE,
      },
      {
        why: 'the same, for chat completions',
        find: '\t\t\t\tif (isStreamPromise(params, apiPromise)) {\n\t\t\t\t\tapiPromise.then((stream) => {',
        replace: [
          '\t\t\t\tif (observeAPIPromise(apiPromise, isStreamPromise(params, apiPromise) ? (stream) => self._wrap(stream, "iterator", (origIterator) => () => self._onChatCompletionsStreamIterator(origIterator(), span, startNow, config, commonAttrs, ctx)) : (result) => self._onChatCompletionsCreateResult(span, startNow, commonAttrs, result, config, ctx), self._createAPIPromiseRejectionHandler(startNow, span, commonAttrs))) return apiPromise;',
          '\t\t\t\tif (isStreamPromise(params, apiPromise)) {\n\t\t\t\t\tapiPromise.then((stream) => {',
        ].join('\n'),
      },
      {
        why: 'the same, for embeddings',
        find: '\t\t\t\tapiPromise.then((result) => {\n\t\t\t\t\tself._onEmbeddingsCreateResult(',
        replace:
          '\t\t\t\tif (observeAPIPromise(apiPromise, (result) => self._onEmbeddingsCreateResult(span, startNow, commonAttrs, result), self._createAPIPromiseRejectionHandler(startNow, span, commonAttrs))) return apiPromise;\n\t\t\t\tapiPromise.then((result) => {\n\t\t\t\t\tself._onEmbeddingsCreateResult(',
      },
      {
        why: 'the same, for responses; a failed streamed response now ends its span, with the error',
        find: '\t\t\t\tif (isStreamPromise(params, apiPromise)) return apiPromise.then((stream) => {',
        replace: [
          '\t\t\t\tif (observeAPIPromise(apiPromise, isStreamPromise(params, apiPromise) ? (stream) => self._wrap(stream, Symbol.asyncIterator, (origIterator) => () => self._onResponsesStreamIterator(origIterator.call(stream), span, startNow, config, commonAttrs, ctx)) : (result) => self._onResponsesCreateResult(span, startNow, commonAttrs, result, config, ctx), self._createAPIPromiseRejectionHandler(startNow, span, commonAttrs))) return apiPromise;',
          '\t\t\t\tif (isStreamPromise(params, apiPromise)) return apiPromise.then((stream) => {',
        ].join('\n'),
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-aws-sdk',
    file: 'dist/aws-sdk.cjs',
    patches: [
      {
        // @smithy/middleware-stack's resolve() composes whatever the handler returns; its own
        // specs and hand-built stacks end in handlers that return plain values.
        why: "a middleware stack whose handler returns a plain value (or nothing) or throws at once: `.then is not a function` in the instrumentation's wrapper, an unhandled rejection (the process ends, exit 1), and the promise the app awaits never settles; the handler's result, value or error, now goes on as a promise's",
        find: '\t\t\t\t\t\t_opentelemetry_api.context.with(activeContextWithSpan, () => {\n\t\t\t\t\t\t\tself.servicesExtensions.requestPostSpanHook(normalizedRequest);\n\t\t\t\t\t\t\treturn self._callOriginalFunction(() => origHandler.call(this, command));\n\t\t\t\t\t\t}).then((response) => {',
        replace:
          '\t\t\t\t\t\tnew Promise((resolveHandler) => resolveHandler(_opentelemetry_api.context.with(activeContextWithSpan, () => {\n\t\t\t\t\t\t\tself.servicesExtensions.requestPostSpanHook(normalizedRequest);\n\t\t\t\t\t\t\treturn self._callOriginalFunction(() => origHandler.call(this, command));\n\t\t\t\t\t\t}))).then((response) => {',
      },
      {
        why: 'the same, for a handler that returns nothing',
        find: 'const requestId = response.output?.$metadata?.requestId;',
        replace: 'const requestId = response?.output?.$metadata?.requestId;',
      },
      {
        why: 'the same',
        find: 'const httpStatusCode = response.output?.$metadata?.httpStatusCode;',
        replace: 'const httpStatusCode = response?.output?.$metadata?.httpStatusCode;',
      },
      {
        why: 'the same',
        find: 'const extendedRequestId = response.output?.$metadata?.extendedRequestId;',
        replace: 'const extendedRequestId = response?.output?.$metadata?.extendedRequestId;',
      },
      { why: 'the same', find: 'data: response.output,', replace: 'data: response?.output,' },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-nestjs-core',
    file: 'dist/instrumentation.cjs',
    patches: [
      {
        // RouterExecutionContext.create builds the guards', interceptors' and filters'
        // ExecutionContext from the callback it is given.
        why: "the controller's method was replaced by the instrumentation's wrapper in what Nest hands its guards, interceptors and filters: `ctx.getHandler() === Controller.prototype.method` was false, a WeakMap or registry keyed by the method found nothing, the handler read as of arity 0 and always async. Nest gets the app's method; the span of that wrapper (named after the method, nestjs.type 'handler', a child of the request's) goes, the request's span (`Controller.method`, nestjs.type 'request_context') stays and covers the guards, interceptors and handler",
        find: 'return function createHandlerWithTrace(instance, callback) {\n\t\t\targuments[1] = createWrapHandler(tracer, moduleVersion, callback);\n',
        replace: 'return function createHandlerWithTrace(instance, callback) {\n',
      },
    ],
  },
  {
    package: '@opentelemetry/instrumentation-amqplib',
    file: 'dist/amqplib.cjs',
    patches: [
      {
        // amqplib (< 2.2.1) keeps `cb || false` per unconfirmed message, and on the channel's close
        // calls the callbacks up to the first `false` (lib/channel.js, lib/channel_model.js).
        why: "a confirm channel's publish() or sendToQueue() without a callback got the instrumentation's, so amqplib kept a callback for it where it keeps `false`: after the channel closed, waitForConfirms() resolved where it rejects with 'channel closed' (amqplib's own `confirms › works when channel is closed`). Without the app's callback the original is called as the app called it and the span ends once the message is sent, as a plain channel's publish span does (no publishConfirmHook then)",
        find: '\t\t\tconst argumentsCopy = [...arguments];\n\t\t\targumentsCopy[3] = modifiedOptions;\n\t\t\targumentsCopy[4] = _opentelemetry_api.context.bind(',
        replace: [
          '\t\t\tconst argumentsCopy = [...arguments];',
          '\t\t\targumentsCopy[3] = modifiedOptions;',
          '\t\t\tif (!callback) try {',
          '\t\t\t\treturn _opentelemetry_api.context.with(markedContext, original.bind(this, ...argumentsCopy));',
          '\t\t\t} finally {',
          '\t\t\t\tspan.end();',
          '\t\t\t}',
          '\t\t\targumentsCopy[4] = _opentelemetry_api.context.bind(',
        ].join('\n'),
      },
    ],
  },
  {
    // undici's upload parts (vendor.ts UNDICI_PARTS) reach its fetch body module, whose multipart
    // boundary takes crypto.randomInt and, where Node has no crypto, the app's Math.random. pyro-run
    // needs crypto anyway (its span and profile ids, util/random.ts).
    package: 'undici',
    file: 'lib/web/fetch/body.js',
    patches: [
      {
        why: "a Node without crypto would have the agent's bundle of undici draw from the app's Math.random, whose seeded sequence is the app's",
        find: "const random = runtimeFeatures.has('crypto')\n  ? require('node:crypto').randomInt\n  : (max) => Math.floor(Math.random() * max)",
        replace: "const random = require('node:crypto').randomInt",
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
      throw new Error(
        `${file}: the text to patch (${patch.why}) is ${at < 0 ? 'not there' : 'there more than once'}; the instrumentation changed, revisit build/instrumentation-patches.ts`,
      );
    }
    patched = patched.slice(0, at) + patch.replace + patched.slice(at + patch.find.length);
  }
  return patched;
}
