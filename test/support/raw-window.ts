// A sampler tree (the raw window @datadog/pprof's time profiler hands over) for tests of the
// window build and encoding: `n` leaf functions under the root, one sample each.
import type { TimeProfile, TimeProfileNode, TimeProfileNodeContext } from '@datadog/pprof/out/src/v8-types.js';

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

/** A sample of a tree node: its context and the thread CPU time since the previous one (ms). */
export const sampleAt = (context: object | undefined, cpuMs: number): TimeProfileNodeContext => ({ context, timestamp: 0n, cpuTime: cpuMs * 1_000_000 });

let nextLine = 10;
/** A tree node of /app/index.js, each at a line of its own (so each is a function of its own). */
export function treeNode(name: string, hitCount: number, contexts: TimeProfileNodeContext[] = [], children: TimeProfileNode[] = []): TimeProfileNode {
  return { name, scriptName: 'file:///app/index.js', scriptId: 1, lineNumber: nextLine++, columnNumber: 3, hitCount, contexts, children };
}

/** The two spans the window tests label samples with. */
export const SPAN_A = { spanId: '00f067aa0ba902b7', traceId: '4bf92f3577b34da6a3ce929d0e0e4736', name: 'GET /users/:id' };
export const SPAN_B = { spanId: 'b7ad6b7169203331', traceId: '0af7651916cd43dd8448eb211c80319c', name: 'job' };
