/**
 * Build step (after tsc and vendor-bundles): writes each preload — the main thread's
 * (src/register.ts) and a worker thread's (src/threads/worker-preload.ts, a worker's agent only) —
 * as one file under dist/preload/ (src/preloads.ts names them), holding it and every module of ours
 * it loads, so that a process with the agent resolves, reads and compiles one module instead of
 * ~80. Each `import` of ours costs a resolution (stats, package.json reads, URL work), a read and a
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
import { keepOwnUrl } from './own-url.js';
import { MAIN_PRELOAD_URL, WORKER_PRELOAD_URL } from '../src/preloads.js';

const require = createRequire(import.meta.url);
const esbuild = require('esbuild') as typeof import('esbuild');

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const dist = path.join(repoRoot, 'dist');
const sources = path.join(repoRoot, 'src');
/** Each preload: the source it is bundled from, the file it is written to. */
const PRELOADS = [
  { entry: path.join(sources, 'register.ts'), outfile: fileURLToPath(MAIN_PRELOAD_URL) },
  { entry: path.join(sources, 'threads', 'worker-preload.ts'), outfile: fileURLToPath(WORKER_PRELOAD_URL) },
];
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

async function main(): Promise<void> {
  for (const dir of new Set(PRELOADS.map(({ outfile }) => path.dirname(outfile)))) rmSync(dir, { recursive: true, force: true });
  for (const { entry, outfile } of PRELOADS) {
    await esbuild.build({
      entryPoints: [entry],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      packages: 'external',
      legalComments: 'inline',
      logLevel: 'warning',
      plugins: [bundledLazyParts(), ownModules(outfile)],
    });
  }
}

await main();
