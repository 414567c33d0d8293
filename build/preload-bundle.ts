/**
 * Build step (after tsc and vendor-bundles): writes each preload — the main thread's
 * (src/register.ts) and a worker thread's (src/threads/worker-preload.ts, a worker's agent only) —
 * as one bundle under dist/preload/ (src/preloads.ts names them), holding it and every module of
 * ours it loads, so that a process with the agent resolves, reads and compiles one module instead
 * of ~80. Each `import` of ours costs a resolution (stats, package.json reads, URL work), a read and a
 * compile before the app's first line; bundled, a hello world's start is measurably lighter
 * (docs/performance.md).
 *
 * - The bundles are made from the TypeScript sources, into files of their own: tsc's output under
 *   dist/src/ is left as tsc wrote it.
 * - What the preload loads only when it starts the agent (src/agent/lazy-parts.ts: boot and what
 *   it needs, a worker's agent) stays lazy: build/bundled-lazy-parts.ts stands in for that module,
 *   and esbuild's require, which it calls, runs a bundled module's body at the first call, not at load.
 * - Each module keeps its own `import.meta.url` (its file under dist/src/, as tsc writes it), so the
 *   paths it resolves from there — dist/vendor/, the final flush's worker file, the report's exit
 *   summary, package.json, the other preload — are the ones it resolves unbundled.
 * - Each preload is two files: its body, the bundle itself, as CommonJS (`register.cjs`), and the
 *   ES module Node loads (`register.js`), which runs the body through V8's code cache
 *   (src/util/code-cache.ts; Node gives an ES module no way to take a cache of ours). The body's
 *   entry is written once its start has run (`'after-load'`): what a process runs before the app's
 *   first line is read compiled, the rest compiled when it first runs.
 * - Packages from node_modules stay external: they are loaded as before.
 * - Everything else uses dist/src/ unbundled (the CLI, the programmatic API, the flush worker, the
 *   report); state shared with the running agent goes through `Symbol.for` globals
 *   (span-link/public-processor.ts), which work across copies.
 *
 * Usage: node dist/build/preload-bundle.js
 */
import { createRequire } from 'node:module';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import { writeAscii } from './ascii-output.js';
import { keepOwnUrl } from './own-url.js';
import { MAIN_PRELOAD_URL, WORKER_PRELOAD_URL, preloadBody } from '../src/preloads.js';

const require = createRequire(import.meta.url);
const esbuild = require('esbuild') as typeof import('esbuild');

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const dist = path.join(repoRoot, 'dist');
const sources = path.join(repoRoot, 'src');
/** Each preload: the source it is bundled from, the file Node loads. */
const PRELOADS = [
  { entry: path.join(sources, 'register.ts'), preload: MAIN_PRELOAD_URL },
  { entry: path.join(sources, 'threads', 'worker-preload.ts'), preload: WORKER_PRELOAD_URL },
];
const CODE_CACHE = path.join(sources, 'util', 'code-cache.ts');
/** What stands for `import.meta.url` in a CommonJS body (defined by its first line, from `__filename`). */
const BODY_URL = '__bundleUrl';
const LAZY_PARTS = path.join(sources, 'agent', 'lazy-parts.ts');
const BUNDLED_LAZY_PARTS = path.join(repoRoot, 'build', 'bundled-lazy-parts.ts');

/** The file tsc compiles a source of ours to (src/x/y.ts → dist/src/x/y.js). */
const compiledFile = (source: string): string => path.join(dist, path.relative(repoRoot, source)).replace(/\.ts$/, '.js');

/** Our modules, from their sources, each keeping its own `import.meta.url` as seen from the bundle at `outfile`. */
function ownModules(outfile: string): Plugin {
  const bundleDir = path.dirname(outfile);
  return {
    name: 'pyro-run-own-modules',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        if (!args.path.startsWith(`${sources}${path.sep}`)) return undefined;
        return { contents: keepOwnUrl(readFileSync(args.path, 'utf8'), path.relative(bundleDir, compiledFile(args.path))), loader: 'ts' };
      });
    },
  };
}

/**
 * An import of lazy-parts.ts resolves to its bundled stand-in. Bundled as it is, it would load boot
 * from dist/src/ unbundled, a second copy of our modules: the build fails instead.
 */
function bundledLazyParts(): Plugin {
  return {
    name: 'pyro-run-bundled-lazy-parts',
    setup(build) {
      build.onResolve({ filter: /\/lazy-parts\.js$/ }, (args) =>
        path.join(args.resolveDir, args.path).replace(/\.js$/, '.ts') === LAZY_PARTS ? { path: BUNDLED_LAZY_PARTS } : undefined,
      );
      build.onLoad({ filter: /\/lazy-parts\.ts$/ }, (args) => {
        if (args.path === LAZY_PARTS)
          throw new Error(`${path.relative(repoRoot, LAZY_PARTS)} is imported in a way build/preload-bundle.ts does not swap for its stand-in`);
        return undefined;
      });
    },
  };
}

/** The ES module Node loads: it runs the body beside it, with the code cache. */
function preloadModule(body: string): string {
  return [
    `import { CODE_CACHE_DIR, requireWithCodeCache } from ${JSON.stringify(CODE_CACHE)};`,
    "import { fileURLToPath } from 'node:url';",
    `requireWithCodeCache(fileURLToPath(new URL(${JSON.stringify(`./${path.basename(body)}`)}, import.meta.url)), CODE_CACHE_DIR, 'after-load');`,
  ].join('\n');
}

async function main(): Promise<void> {
  const common = { bundle: true, platform: 'node', target: 'node22', packages: 'external', legalComments: 'inline', logLevel: 'warning' } as const;
  for (const dir of new Set(PRELOADS.map(({ preload }) => path.dirname(fileURLToPath(preload))))) rmSync(dir, { recursive: true, force: true });
  for (const { entry, preload } of PRELOADS) {
    const outfile = fileURLToPath(preload);
    const body = fileURLToPath(preloadBody(preload));
    const built = await esbuild.build({
      ...common,
      entryPoints: [entry],
      outfile: body,
      write: false,
      format: 'cjs',
      banner: { js: `'use strict';\nvar ${BODY_URL} = require('node:url').pathToFileURL(__filename).href;` },
      define: { 'import.meta.url': BODY_URL },
      plugins: [bundledLazyParts(), ownModules(body)],
    });
    // In ASCII (ascii-output.ts): the body is the largest source V8 keeps of ours.
    writeAscii(built.outputFiles);
    await esbuild.build({
      ...common,
      stdin: { contents: preloadModule(body), resolveDir: path.dirname(outfile), loader: 'js' },
      outfile,
      format: 'esm',
      plugins: [ownModules(outfile)],
    });
  }
}

await main();
