import { createRequire } from 'node:module';
import type { PerformanceObserver } from 'node:perf_hooks';
import type { SourceMapper } from '@datadog/pprof/out/src/sourcemapper/sourcemapper.js';
import type { AllocationProfileNode } from '@datadog/pprof/out/src/v8-types.js';
import type { PprofFormat } from './pprof-format.js';
import { PprofTables, type StackFrame, stackOf } from './pprof-tables.js';
import type { ProfileSource } from './profile-source.js';
import { PROFILE_TYPES, type ProfileType } from './profile-types.js';
import type { Profile, WindowPart } from './profile-window.js';

const require = createRequire(import.meta.url);
/**
 * @datadog/pprof's bindings of V8's sampling heap profiler, required on their own (its index and
 * heap-profiler.js load pprof-format and more at start); the package has no `exports` map, so the
 * path is public to Node, and the version is pinned.
 */
const PPROF_HEAP_BINDINGS = '@datadog/pprof/out/src/heap-profiler-bindings.js';

interface HeapBindings {
  startSamplingHeapProfiler(intervalBytes: number, stackDepth: number): void;
  stopSamplingHeapProfiler(): void;
  /** The live sampled objects now, as a tree of plain objects (counts already scaled up by V8). */
  getAllocationProfile(): AllocationProfileNode;
}

export interface HeapSourceOptions {
  /** Mean bytes allocated between two samples (PYROSCOPE_HEAP_SAMPLING_INTERVAL_BYTES). */
  intervalBytes: number;
  /** Deepest stack recorded per sample (PYROSCOPE_HEAP_STACK_DEPTH). */
  stackDepth: number;
}

/** Tree nodes handled between two checks of the time slice, as for time profiles. */
const NODES_PER_STEP = 16;
/** Memory outside V8's heap (Buffers, ArrayBuffers), shown as one frame as @datadog/pprof does. */
const EXTERNAL_FRAME = '(external)';

interface Snapshot {
  tree: AllocationProfileNode;
  externalBytes: number;
}

/**
 * The in-use memory profile: V8's sampling heap profiler, which keeps every sampled allocation
 * until the garbage collector frees it — so what it holds at an arbitrary moment includes the
 * garbage no collection has freed yet, which under an app's churn can be several times what is
 * retained (measured: 100 MB retained read as 120–420 MB). A window's profile is therefore read,
 * as Go's heap profile is, just after a full collection: the first mark-compact after the
 * window's start (a `gc` performance entry; one read per window, ~1–4 ms for 64–256 MB of heap),
 * or at the cut when the window saw none. Its samples carry no span: V8 records no context with
 * an allocation sample (docs/memory.md).
 */
export class HeapSource implements ProfileSource {
  private bindings: HeapBindings | undefined;
  private observer: PerformanceObserver | undefined;
  private afterCollection: Snapshot | undefined;

  constructor(private readonly options: HeapSourceOptions) {}

  start(): void {
    const bindings = require(PPROF_HEAP_BINDINGS) as HeapBindings;
    bindings.startSamplingHeapProfiler(this.options.intervalBytes, this.options.stackDepth);
    this.bindings = bindings;
    const { PerformanceObserver, constants } = process.getBuiltinModule('node:perf_hooks') as typeof import('node:perf_hooks');
    this.observer = new PerformanceObserver((entries) => {
      if (this.afterCollection !== undefined || this.bindings === undefined) return;
      if (!entries.getEntries().some((entry) => (entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) return;
      try {
        this.afterCollection = this.snapshot(this.bindings);
        this.observer?.disconnect();
      } catch {
        // The cut reads it instead.
      }
    });
    this.watchCollections();
  }

  cut(last: boolean): WindowPart | undefined {
    const bindings = this.bindings;
    if (bindings === undefined) return undefined;
    const { tree, externalBytes } = this.afterCollection ?? this.snapshot(bindings);
    this.afterCollection = undefined;
    if (last) {
      this.observer?.disconnect();
      bindings.stopSamplingHeapProfiler();
      this.bindings = undefined;
    } else {
      this.watchCollections();
    }
    const { intervalBytes } = this.options;
    return { build: (from, sourceMapper) => buildHeapProfile(tree, externalBytes, from, intervalBytes, sourceMapper) };
  }

  private watchCollections(): void {
    this.observer?.observe({ type: 'gc' });
  }

  private snapshot(bindings: HeapBindings): Snapshot {
    return { tree: bindings.getAllocationProfile(), externalBytes: process.memoryUsage().external };
  }
}

/**
 * The pprof of a heap snapshot, in steps: one sample per allocation entry of a node (an object
 * size), valued [objects, bytes], as @datadog/pprof's serializer writes it — the counts V8 gives
 * are already scaled from the samples to the whole heap, so nothing is scaled here.
 */
export function* buildHeapProfile(tree: AllocationProfileNode, externalBytes: number, from: number, intervalBytes: number, sourceMapper?: SourceMapper): Generator<void, Map<ProfileType, Profile>> {
  const tables = new PprofTables(sourceMapper);
  const { Profile, Sample } = tables.format;
  const samples: InstanceType<PprofFormat['Sample']>[] = [];
  const pending: { node: AllocationProfileNode; parent: StackFrame | undefined }[] = tree.children.map((node) => ({ node, parent: undefined }));
  if (externalBytes > 0) pending.push({ node: { name: EXTERNAL_FRAME, scriptName: '', scriptId: 0, lineNumber: 0, columnNumber: 0, allocations: [{ sizeBytes: externalBytes, count: 1 }], children: [] }, parent: undefined });
  let handled = 0;
  while (pending.length > 0) {
    const { node, parent } = pending.pop()!;
    const frame: StackFrame = { locationId: tables.locationOf(node), parent };
    if (node.allocations.length > 0) {
      const stack = stackOf(frame);
      for (const { sizeBytes, count } of node.allocations) samples.push(new Sample({ locationId: stack, value: [count, sizeBytes * count] }));
    }
    for (const child of node.children) pending.push({ node: child, parent: frame });
    if (++handled % NODES_PER_STEP === 0) yield;
  }
  const info = PROFILE_TYPES.heap;
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
  return new Map([['heap', profile]]);
}
