/**
 * src/agent/lazy-parts.ts as the preload bundles hold it (build/preload-bundle.ts swaps this module
 * in for that one): a bare `require` of each part, which esbuild bundles as a module whose body runs
 * at the first call, not when the preload loads. Never run unbundled: an ES module has no `require`.
 */
import type * as LazyParts from '../src/agent/lazy-parts.js';

export const requireBoot: typeof LazyParts.requireBoot = () => require('../src/agent/boot.js') as ReturnType<typeof LazyParts.requireBoot>;

export const requireWorkerAgent: typeof LazyParts.requireWorkerAgent = () =>
  require('../src/threads/worker-agent.js') as ReturnType<typeof LazyParts.requireWorkerAgent>;
