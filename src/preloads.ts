/**
 * Where the preloads are: each an esbuild bundle of its own under dist/preload/ (the ES module Node
 * loads and the body it runs), which build/preload-bundle.ts writes beside tsc's output (that
 * output is what runs unbundled: the CLI, the programmatic API, the report). Named here, from this
 * module's own file, for everything that points at them: the CLI's `--require`, worker-spawn.ts and
 * a worker's preload, the bundle build and its tests. package.json's `exports["./register"]` names
 * the main thread's too.
 */

/** The main thread's preload, bundled from src/register.ts: `pyro-run/register`. */
export const MAIN_PRELOAD_URL = new URL('../preload/register.js', import.meta.url);
/** A worker thread's preload, bundled from src/threads/worker-preload.ts (its agent only). */
export const WORKER_PRELOAD_URL = new URL('../preload/worker.js', import.meta.url);
/**
 * A preload's body: the bundle of the agent's modules, as CommonJS, which its preload runs with V8's
 * code cache (build/preload-bundle.ts).
 */
export const preloadBody = (preload: URL): URL => new URL(preload.href.replace(/\.js$/, '.cjs'));
