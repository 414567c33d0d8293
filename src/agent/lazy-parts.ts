/**
 * What the preload loads only once it knows there is work to do: boot (and with it the heavy
 * modules), or a worker thread's agent. Synchronous on purpose: the app must not start loading
 * before instrumentation is in place, and `require(esm)` of our own graph (no top-level await)
 * keeps `--require` working too.
 *
 * This is the unbundled form (the programmatic API, src/index.ts), a require from this file. In
 * the preload bundles, build/bundled-lazy-parts.ts stands in for this module (build/preload-bundle.ts
 * swaps it in): there esbuild's own require runs a bundled module's body at the first call.
 */

const ownRequire = (): NodeJS.Require => (globalThis.process.getBuiltinModule('node:module') as typeof import('node:module')).createRequire(import.meta.url);

export function requireBoot(): typeof import('./boot.js') {
  return ownRequire()('./boot.js') as typeof import('./boot.js');
}

export function requireWorkerAgent(): typeof import('../threads/worker-agent.js') {
  return ownRequire()('../threads/worker-agent.js') as typeof import('../threads/worker-agent.js');
}
