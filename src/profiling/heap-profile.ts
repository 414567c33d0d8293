import { createRequire } from 'node:module';
import type { SourceMapper } from '@datadog/pprof/out/src/sourcemapper/sourcemapper.js';
import type { AllocationProfileNode, AllocationProfileNodeWithStats } from '@datadog/pprof/out/src/v8-types.js';
import type { PprofFormat } from './pprof-format.js';
import { PprofTables, type StackFrame, stackOf } from './pprof-tables.js';
import { PROFILE_TYPES, type ProfileType } from './profile-types.js';
import type { Profile } from './profile-window.js';
import { LABEL_THREAD_NAME } from '../wire.js';

const require = createRequire(import.meta.url);
/**
 * @datadog/pprof's bindings of V8's sampling heap profiler, required on their own (its index and
 * heap-profiler.js load pprof-format and more at start); the package has no `exports` map, so the
 * path is public to Node, and the version is pinned.
 */
const PPROF_HEAP_BINDINGS = '@datadog/pprof/out/src/heap-profiler-bindings.js';

export interface HeapBindings {
  /**
   * `allocations`: also count what was freed (Node 26+; older ones throw), at the price of a full
   * collection at every read.
   */
  startSamplingHeapProfiler(intervalBytes: number, stackDepth: number, allocations?: boolean): void;
  stopSamplingHeapProfiler(): void;
  /**
   * The sampled objects as a tree of plain objects, counts already scaled up by V8: the live ones
   * (per object size), or, in allocation mode, every one since the start with what is live of it.
   */
  getAllocationProfile(): HeapNode;
  /**
   * V8's near-heap-limit callback, native: at the limit the addon prints one `NearHeapLimit(…)`
   * line to stderr, reads the profile, raises the limit by `extensionBytes` (`count` times at most,
   * restored once usage falls back) and calls `callback` with the tree — in `Interrupt` mode
   * synchronously, wherever JavaScript is running. The arguments are positional and all required.
   */
  monitorOutOfMemory(
    extensionBytes: number,
    count: number,
    dumpOnStderr: boolean,
    exportCommand: string[],
    callback: (tree: AllocationProfileNode) => void,
    callbackMode: number,
    isMainThread: boolean,
    automaticExtension: boolean,
  ): void;
}

/** The bindings, loaded at the first use. */
export function heapBindings(): HeapBindings {
  return require(PPROF_HEAP_BINDINGS) as HeapBindings;
}

/** Tree nodes handled between two checks of the time slice, as for time profiles. */
const NODES_PER_STEP = 16;

/** A node of V8's sampling heap profile, in either mode: its allocation entries are per object size, or aggregated with stats. */
export type HeapNode = AllocationProfileNode | AllocationProfileNodeWithStats;

/** One thread's sampled heap: the tree's top frames (the `(root)` node itself is no frame), and the `thread_name` its samples carry. */
export interface HeapRoots<N extends HeapNode> {
  thread: string;
  roots: readonly N[];
}

/**
 * The pprof of a sampling heap profile, in steps: one sample per allocation entry of a node,
 * valued as `valuesOf` reads it (objects, bytes) — V8's counts are already scaled from the samples
 * to the whole heap, as @datadog/pprof's serializer takes them, so nothing is scaled here. Every
 * thread's tree in one profile, each sample labelled with its thread (the main thread's first;
 * script ids are numbered per thread, so each thread's frames are scoped apart).
 */
export function* buildHeapProfile<N extends HeapNode>(
  type: ProfileType,
  threads: readonly HeapRoots<N>[],
  valuesOf: (entry: N['allocations'][number]) => [number, number],
  from: number,
  intervalBytes: number,
  sourceMapper?: SourceMapper,
): Generator<void, Map<ProfileType, Profile>> {
  const tables = new PprofTables(sourceMapper);
  const { Profile, Sample, Label } = tables.format;
  const samples: InstanceType<PprofFormat['Sample']>[] = [];
  let handled = 0;
  for (const [index, { thread, roots }] of threads.entries()) {
    const label = [new Label({ key: tables.strings.dedup(LABEL_THREAD_NAME), str: tables.strings.dedup(thread) })];
    const scope = index === 0 ? '' : `t${index}/`;
    const pending: { node: N; parent: StackFrame | undefined }[] = roots.map((node) => ({ node, parent: undefined }));
    while (pending.length > 0) {
      const { node, parent } = pending.pop()!;
      const frame: StackFrame = { locationId: tables.locationOf(node, scope), parent };
      if (node.allocations.length > 0) {
        const stack = stackOf(frame);
        for (const entry of node.allocations as N['allocations'][number][]) {
          const value = valuesOf(entry);
          if (value[0] !== 0 || value[1] !== 0) samples.push(new Sample({ locationId: stack, value, label }));
        }
      }
      for (const child of node.children as N[]) pending.push({ node: child, parent: frame });
      if (++handled % NODES_PER_STEP === 0) yield;
    }
  }
  const info = PROFILE_TYPES[type];
  const profile = new Profile({
    sampleType: info.sampleTypes.map((t) => tables.valueType(t)),
    sample: samples,
    location: tables.locations,
    function: tables.functions,
    stringTable: tables.strings,
    timeNanos: BigInt(from) * 1_000_000n,
    periodType: tables.valueType(info.periodType),
    period: intervalBytes,
  });
  return new Map([[type, profile]]);
}
