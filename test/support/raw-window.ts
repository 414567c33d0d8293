// A sampler tree (the raw window @datadog/pprof's time profiler hands over) for tests of the
// window build and encoding: `n` leaf functions under the root, one sample each.
import type { TimeProfile, TimeProfileNodeContext } from '@datadog/pprof/out/src/v8-types.js';

/** `n` leaf functions `f0…`, each hit once, with the sample context `contextOf(i)` gives. */
export function leafWindow(n: number, contextOf: (i: number) => TimeProfileNodeContext): TimeProfile {
  const children = Array.from({ length: n }, (_, i) => ({
    name: `f${i}`,
    scriptName: '/app/index.js',
    scriptId: 1,
    lineNumber: i + 1,
    columnNumber: 1,
    hitCount: 1,
    children: [],
    contexts: [contextOf(i)],
  }));
  return { startTime: 0, endTime: 15_000_000, hasCpuTime: true, topDownRoot: { name: '(root)', scriptName: '', hitCount: 0, children } };
}
