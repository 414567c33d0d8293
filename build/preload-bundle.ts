/**
 * Build step (after tsc and vendor-bundles): replaces dist/register.js, the preload, with one file
 * holding it and every module of ours it loads (dist/src/…), and likewise a worker thread's preload
 * (dist/src/threads/worker-preload.js, a worker's agent only), so that a process with the agent
 * resolves, reads and compiles one module instead of ~80. Each `import` of ours costs a
 * resolution (stats, package.json reads, URL work), a read and a compile before the app's first
 * line; bundled, a hello world's start costs ~40 ms less wall and CPU (docs/performance.md).
 *
 * - What the preload loads only when it starts the agent (src/agent/start.ts requireBoot: boot and what
 *   it needs) stays lazy: its `require` becomes esbuild's, which runs a bundled module's body at
 *   the first call, not at load.
 * - Each module keeps its own `import.meta.url` (rewritten to its file under dist/src/), so the
 *   paths it resolves from there — dist/vendor/, the final flush's worker file, the report's exit
 *   summary, package.json — are the ones it resolves unbundled.
 * - Packages from node_modules stay external: they are loaded as before.
 * - Everything else keeps using dist/src/ unbundled (the CLI, the programmatic API, the flush
 *   worker, the report); state shared with the running agent goes through `Symbol.for` globals
 *   (span-link/public-processor.ts), which work across copies.
 *
 * Usage: node dist/build/preload-bundle.js
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import { keepOwnUrl } from './own-url.js';

const require = createRequire(import.meta.url);
const esbuild = require('esbuild') as typeof import('esbuild');

const dist = fileURLToPath(new URL('../', import.meta.url));
/** The main thread's preload, and a worker thread's (src/threads/worker-preload.ts): each a bundle of its own, in place. */
const PRELOADS = [path.join(dist, 'register.js'), path.join(dist, 'src', 'threads', 'worker-preload.js')];
/** The first line of the bundle: a second run must start from tsc's output, not from a bundle. */
const MARK = '// pyro-run preload bundle: built by build/preload-bundle.ts from tsc output';
/** start.ts loads boot (and a worker's agent) lazily through its own require; in the bundle, esbuild's require does it. */
const LAZY_REQUIRES = ["globalThis.process.getBuiltinModule('node:module').createRequire(import.meta.url)('./boot.js')", "globalThis.process.getBuiltinModule('node:module').createRequire(import.meta.url)('../threads/worker-agent.js')"];


/** Our modules from tsc's output, each keeping its own `import.meta.url` as seen from the bundle at `outfile`. */
function ownModules(outfile: string): Plugin {
  const bundleDir = path.dirname(outfile);
  return {
    name: 'pyro-run-own-modules',
    setup(build) {
      build.onLoad({ filter: /\.js$/ }, (args) => {
        if (!args.path.startsWith(dist) || args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        let text = readFileSync(args.path, 'utf8');
        if (PRELOADS.includes(args.path) && text.startsWith(MARK)) throw new Error(`${args.path} is a bundle already: run tsc first (npm run build)`);
        if (args.path === path.join(dist, 'src', 'agent', 'start.js')) {
          for (const lazy of LAZY_REQUIRES) {
            if (!text.includes(lazy)) throw new Error('src/agent/start.ts no longer loads boot and the worker agent as preload-bundle.ts expects: revisit LAZY_REQUIRES');
            text = text.replaceAll(lazy, `require${lazy.slice(lazy.lastIndexOf("("))}`);
          }
        }
        return { contents: keepOwnUrl(text, path.relative(bundleDir, args.path)), loader: 'js' };
      });
    },
  };
}

async function main(): Promise<void> {
  for (const preload of PRELOADS) {
    await esbuild.build({
      entryPoints: [preload],
      outfile: preload,
      allowOverwrite: true,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      packages: 'external',
      banner: { js: MARK },
      legalComments: 'inline',
      logLevel: 'warning',
      plugins: [ownModules(preload)],
    });
  }
}

await main();
