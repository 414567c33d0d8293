/**
 * Build step (after tsc): bundles the OpenTelemetry packages pyro-run runs inside the app into
 * dist/vendor/, which src/vendor.ts loads at run time.
 *
 * Why: loaded from node_modules, the SDK and the instrumentations are ~300 small CommonJS files.
 * Each costs a stat, a read, a compile and a module object before the app's first line, and
 * their sources stay in memory. One bundle of the shared parts plus one per instrumentation
 * halves the start-up time these parts add and saves ~7 MB of RSS (docs/performance.md).
 *
 * - `otel.cjs` holds the shared packages behind lazy getters (a package runs on first access).
 * - `instrumentation-<name>.cjs`, one per instrumentation, so an app only parses the ones it can
 *   use. Their imports of the shared packages are routed to `otel.cjs`, so that there is one copy
 *   of each (one context API, one semantic-conventions table) however many are loaded.
 * - `otlp-trace.cjs`: the OTLP trace serializers, from otlp-transformer's ESM build so that its
 *   metrics and logs halves are left out (its CommonJS index loads all three).
 * - `undici.cjs`: the parts of undici the uploads use (UNDICI_PARTS), without its index, which
 *   loads fetch, WebSocket, the HTTP cache and the mocks too; ~50 files that every process that
 *   uploads loads at its first upload (a short script: at its exit), taken with the code cache.
 * - The net instrumentation gets `tls` lazily (lazyTls below).
 * - Some instrumentations get fixes where they change how a library behaves, and shimmer (in
 *   otel.cjs) the hook of the wrap guard (instrumentation-patches.ts, applied by patchedSources).
 * - import-in-the-middle and require-in-the-middle stay in node_modules: their module hooks keep
 *   state that must be shared with the ESM loader hook registered from node_modules.
 *
 * Usage: node dist/build/vendor-bundles.js
 */
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildOptions, Plugin } from 'esbuild';
import { writeAscii } from './ascii-output.js';
import { INSTRUMENTATION_NAMES } from '../src/tracing/instrumentations.js';
import { type FilePatches, INSTRUMENTATION_PATCHES, patchSource } from './instrumentation-patches.js';
import {
  BUNDLED_INTERNALS,
  SHARED_PACKAGES,
  UNDICI_PARTS,
  VENDOR_CORE_FILE,
  VENDOR_OTLP_TRACE_FILE,
  VENDOR_UNDICI_FILE,
  WRAP_GUARD_ENTRY,
  instrumentationFile,
} from '../src/vendor.js';

const require = createRequire(import.meta.url);
const esbuild = require('esbuild') as typeof import('esbuild');

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const outDir = path.join(repoRoot, 'dist/vendor');
/** Left to node_modules (see above); @datadog/pprof is loaded from there by its own modules. */
const EXTERNAL = ['import-in-the-middle', 'require-in-the-middle'];

const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node22',
  external: EXTERNAL,
  logLevel: 'warning',
  legalComments: 'inline',
  minifyWhitespace: true,
  minifySyntax: true,
} as const;

/** Resolves `pkg` the way code under `fromDir` would; undefined when it cannot. */
function resolveFrom(pkg: string, fromDir: string): string | undefined {
  try {
    return createRequire(path.join(fromDir, 'noop.js')).resolve(pkg);
  } catch {
    return undefined;
  }
}

/**
 * Routes an instrumentation's import of a shared package to `otel.cjs` — only when it resolves to
 * the very copy bundled there (a nested copy of another version stays inside the instrumentation).
 */
function sharedPackages(): Plugin {
  const shared = new Map<string, string | undefined>(SHARED_PACKAGES.map((pkg) => [pkg, resolveFrom(pkg, repoRoot)]));
  return {
    name: 'pyro-run-shared',
    setup(build) {
      build.onResolve({ filter: /^@opentelemetry\// }, (args) => {
        if (!shared.has(args.path) || resolveFrom(args.path, args.resolveDir) !== shared.get(args.path)) return undefined;
        return { path: args.path, namespace: 'pyro-run-shared' };
      });
      build.onLoad({ filter: /.*/, namespace: 'pyro-run-shared' }, (args) => ({
        contents: `module.exports = require(${JSON.stringify(`./${VENDOR_CORE_FILE}`)})[${JSON.stringify(args.path)}];`,
        loader: 'js',
      }));
      build.onResolve({ filter: new RegExp(`^\\./${VENDOR_CORE_FILE.replace('.', '\\.')}$`) }, (args) => ({ path: args.path, external: true }));
    },
  };
}

/**
 * @opentelemetry/instrumentation-net requires `tls` when it loads, only to ask whether a socket is
 * a `tls.TLSSocket`. Loading tls initialises OpenSSL: ~6 MB of RSS before the app's first line,
 * for apps that may never open a TLS connection. Here `tls` is a stand-in whose TLSSocket answers
 * `instanceof` by first checking `socket.encrypted` (always true on a TLSSocket, absent on a plain
 * one) and only then asking the real class — a TLS socket means tls is loaded already. The build
 * fails if the instrumentation starts using more of tls than TLSSocket.
 */
function lazyTls(): Plugin {
  return {
    name: 'pyro-run-lazy-tls',
    setup(build) {
      // The stand-in's own require of node:tls is the real module (left to Node).
      build.onResolve({ filter: /^(node:)?tls$/ }, (args) =>
        args.namespace === 'pyro-run-lazy-tls' ? { path: 'node:tls', external: true } : { path: 'tls', namespace: 'pyro-run-lazy-tls' },
      );
      build.onLoad({ filter: /.*/, namespace: 'pyro-run-lazy-tls' }, () => ({
        contents: `module.exports = { TLSSocket: { [Symbol.hasInstance](socket) { return socket != null && socket.encrypted === true && socket instanceof require('node:tls').TLSSocket; } } };`,
        loader: 'js',
      }));
    },
  };
}

/** The folder of an installed package, from the file its entry resolves to. */
function packageDir(entry: string): string {
  for (let dir = path.dirname(entry); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
  }
  throw new Error(`no package.json above ${entry}`);
}

/** The changes to `pkg`'s files, as esbuild plugins. */
const patchesOf = (pkg: string): Plugin[] => INSTRUMENTATION_PATCHES.filter((fixes) => fixes.package === pkg).map(patchedSources);

/**
 * Applies a package's changes (instrumentation-patches.ts) to its file as esbuild loads it, in
 * every copy of the package the bundle holds (a package nested under another is the same code, as
 * the SDK's own copy of @opentelemetry/core is); the build fails if the bundle never loaded that
 * file (the package now ships its code elsewhere).
 */
function patchedSources(fixes: FilePatches): Plugin {
  const pkg = fixes.package;
  if (!resolveFrom(pkg, repoRoot)) throw new Error(`${pkg} is not installed`);
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return {
    name: `pyro-run-patch-${pkg}/${fixes.file}`,
    setup(build) {
      let applied = false;
      build.onLoad({ filter: new RegExp(`[\\\\/]node_modules[\\\\/]${literal(pkg)}[\\\\/]${literal(fixes.file)}$`) }, (args) => {
        applied = true;
        return { contents: patchSource(readFileSync(args.path, 'utf8'), args.path, fixes.patches), loader: 'js' };
      });
      build.onEnd(() => {
        if (!applied) throw new Error(`${pkg}: ${fixes.file} was not part of the bundle; revisit build/instrumentation-patches.ts`);
      });
    },
  };
}

/** shimmer's module inside @opentelemetry/instrumentation (not among the package's exports). */
function shimmerFile(): string {
  const entry = resolveFrom('@opentelemetry/instrumentation', repoRoot);
  if (!entry) throw new Error('@opentelemetry/instrumentation is not installed');
  const file = path.join(packageDir(entry), 'dist/shimmer.cjs');
  if (!existsSync(file)) throw new Error(`${file} is gone: revisit the wrap guard (build/instrumentation-patches.ts)`);
  return file;
}

/**
 * The entry of an instrumentation's bundle: the package's exports, and the files of its own that
 * BUNDLED_INTERNALS names (functions not among its exports, which pyro-run's lighter paths call
 * so that their spans stay the package's: src/tracing/http-server-spans.ts,
 * src/frameworks/express-layer-spans.ts).
 */
function bundleEntry(name: string, pkg: string): string {
  const exported = `require(${JSON.stringify(pkg)})`;
  const internals = BUNDLED_INTERNALS[name];
  if (internals === undefined) return `module.exports = ${exported};\n`;
  const entry = resolveFrom(pkg, repoRoot);
  if (!entry) throw new Error(`${pkg} is not installed`);
  const added = Object.entries(internals).map(([key, file]) => {
    const full = path.join(packageDir(entry), file);
    if (!existsSync(full)) throw new Error(`${full} is gone: revisit what uses ${key}`);
    return `${JSON.stringify(key)}: require(${JSON.stringify(full)})`;
  });
  return `module.exports = Object.assign({}, ${exported}, { ${added.join(', ')} });\n`;
}

function assertOnlyTlsSocketUsed(): void {
  const entry = resolveFrom('@opentelemetry/instrumentation-net', repoRoot);
  if (!entry) throw new Error('@opentelemetry/instrumentation-net is not installed');
  const source = readFileSync(path.join(path.dirname(entry), 'instrumentation.cjs'), 'utf8');
  // `tls.X` as code, not inside a string such as the span name "tls.connect".
  const used = new Set([...source.matchAll(/(?<!["'`\w.$])tls\.([A-Za-z_$][\w$]*)/g)].map((m) => m[1]));
  if (used.size !== 1 || !used.has('TLSSocket')) throw new Error(`instrumentation-net uses tls.${[...used].join(', tls.')}: revisit lazyTls`);
}

/**
 * A bundle's entry: an object with a getter per key that requires its file, so that a bundled
 * module runs at its first use (an OpenTelemetry package; an undici part, the proxy's only where a
 * proxy is set).
 */
function gettersEntry(parts: readonly (readonly [key: string, file: string])[]): string {
  const getters = parts.map(([key, file]) => `  get ${JSON.stringify(key)}() { return require(${JSON.stringify(file)}); },`);
  return `module.exports = {\n${getters.join('\n')}\n};\n`;
}

/** One bundle, written in ASCII (ascii-output.ts: undici's bundle keeps a legal comment with an `ä`). */
async function bundle(options: BuildOptions): Promise<void> {
  writeAscii((await esbuild.build({ ...common, ...options, write: false })).outputFiles);
}

async function main(): Promise<void> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const shared = [...SHARED_PACKAGES.map((pkg) => [pkg, pkg] as const), [WRAP_GUARD_ENTRY, shimmerFile()] as const];
  await bundle({
    stdin: { contents: gettersEntry(shared), resolveDir: repoRoot, sourcefile: 'otel-entry.cjs', loader: 'js' },
    outfile: path.join(outDir, VENDOR_CORE_FILE),
    plugins: SHARED_PACKAGES.flatMap(patchesOf),
  });
  const plugin = sharedPackages();
  assertOnlyTlsSocketUsed();
  await bundle({
    stdin: {
      contents: "export { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';\n",
      resolveDir: repoRoot,
      sourcefile: 'otlp-trace-entry.mjs',
      loader: 'js',
    },
    outfile: path.join(outDir, VENDOR_OTLP_TRACE_FILE),
    plugins: [plugin],
  });
  await bundle({
    stdin: {
      contents: gettersEntry(Object.entries(UNDICI_PARTS).map(([key, file]) => [key, `undici/${file}`] as const)),
      resolveDir: repoRoot,
      sourcefile: 'undici-entry.cjs',
      loader: 'js',
    },
    outfile: path.join(outDir, VENDOR_UNDICI_FILE),
    plugins: patchesOf('undici'),
  });
  for (const name of INSTRUMENTATION_NAMES) {
    const pkg = `@opentelemetry/instrumentation-${name}`;
    if (!resolveFrom(pkg, repoRoot)) throw new Error(`${pkg} is not installed`);
    await bundle({
      stdin: { contents: bundleEntry(name, pkg), resolveDir: repoRoot, sourcefile: `${name}-entry.cjs`, loader: 'js' },
      outfile: path.join(outDir, instrumentationFile(name)),
      plugins: [plugin, ...(name === 'net' ? [lazyTls()] : []), ...patchesOf(pkg)],
    });
  }
}

await main();
