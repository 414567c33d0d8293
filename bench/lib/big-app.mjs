// What the big-app benches share: the app, its two shapes, and the contenders they run it with.
import path from 'node:path';
import { BENCH, byId, CONTENDERS, preloadOnly, SAMPLER_ALONE } from './contenders.mjs';

export const BIG_APP = path.join(BENCH, 'apps/big-app.cjs');

/** The app's functions as an ordinary module, and compiled with `new Function` as code generators do. */
export const BIG_APP_SHAPES = [
  { id: 'module', env: { BIG_APP_EVAL: '0' } },
  { id: 'new Function', env: { BIG_APP_EVAL: '1' } },
];

const tracingOnly = byId('pyro-none');

/**
 * Bare node, the preload alone, tracing alone, tracing with V8's sampler alone beside it (what V8's
 * profiler adds to the tracing's tier-up, none of pyro-run's profiling in it), everything; and a
 * second build's pyro-run when one is set.
 */
export const BIG_APP_CONTENDERS = [
  { id: 'bare', label: 'bare node', preload: [], env: {} },
  preloadOnly(BIG_APP),
  tracingOnly,
  {
    id: 'pyro-none-sampler',
    label: 'pyro-run, profiles off, + V8 sampler alone',
    preload: [...tracingOnly.preload, ...SAMPLER_ALONE.preload],
    env: tracingOnly.env,
  },
  byId('pyro'),
  ...CONTENDERS.filter((c) => c.id === 'pyro-baseline'),
];
