import type { AllocationProfileNodeWithStats } from '@datadog/pprof/out/src/v8-types.js';
import { buildHeapProfile, type HeapBindings, heapBindings } from './heap-profile.js';
import { MAIN_THREAD_NAME } from '../wire.js';
import type { HeapSourceOptions } from './heap-source.js';
import type { ProfileSource } from './profile-source.js';
import type { WindowPart } from './profile-window.js';

/** The first Node.js major whose V8 can count freed allocations (@datadog/pprof 5.20 throws before). */
const ALLOCATIONS_FROM_NODE = 26;

/** Whether this Node.js can record allocation profiles. */
export function allocationsSupported(nodeVersion: string = process.versions.node): boolean {
  return Number(nodeVersion.split('.')[0]) >= ALLOCATIONS_FROM_NODE;
}

/**
 * The allocation profile: everything allocated in a window, freed or not (`alloc_objects`,
 * `alloc_space`), from V8's sampling heap profiler in its allocation mode. That mode keeps every
 * sample, dead ones included, so the sampler is restarted at each cut: a window's profile is what
 * was allocated since the previous one, and the sampler's memory stays bounded. Each read forces a
 * full collection on the main thread (58–79 ms with 64 MB live, 267–368 ms with 256 MB, Node 26):
 * opt-in, for hunting allocation churn, and not together with the in-use profile, which the
 * restarts would empty (docs/memory.md).
 */
export class AllocationSource implements ProfileSource {
  private bindings: HeapBindings | undefined;

  constructor(private readonly options: HeapSourceOptions) {}

  start(): void {
    const bindings = heapBindings();
    bindings.startSamplingHeapProfiler(this.options.intervalBytes, this.options.stackDepth, true);
    this.bindings = bindings;
  }

  cut(last: boolean): WindowPart | undefined {
    const bindings = this.bindings;
    if (bindings === undefined) return undefined;
    const tree = bindings.getAllocationProfile() as AllocationProfileNodeWithStats;
    bindings.stopSamplingHeapProfiler();
    if (last) this.bindings = undefined;
    else bindings.startSamplingHeapProfiler(this.options.intervalBytes, this.options.stackDepth, true);
    const { intervalBytes } = this.options;
    return {
      build: (from, sourceMapper) =>
        buildHeapProfile(
          'alloc',
          [{ thread: MAIN_THREAD_NAME, roots: tree.children }],
          ({ allocObjects, allocSpaceBytes }) => [allocObjects, allocSpaceBytes],
          from,
          intervalBytes,
          sourceMapper,
        ),
    };
  }
}
