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

/** CallbackMode.Interrupt of @datadog/pprof: the callback runs at the limit even in a loop that never yields. */
const CALLBACK_INTERRUPT = 2;
/**
 * How far the heap limit is raised, once, so that the profile of the moment can be built, encoded
 * and written (a tree of a few thousand nodes: a few MB at most); then the app goes on and dies as
 * it would have, a little later. 'auto' would add a whole young generation (up to +192 MB on Node
 * 24), too much for a container's memory limit.
 */
const OUT_OF_MEMORY_EXTENSION_BYTES = 32 * 1024 * 1024;

export interface HeapSourceOptions {
  /** Mean bytes allocated between two samples (PYROSCOPE_HEAP_SAMPLING_INTERVAL_BYTES). */
  intervalBytes: number;
  /** Deepest stack recorded per sample (PYROSCOPE_HEAP_STACK_DEPTH). */
  stackDepth: number;
  /**
   * Called synchronously when the heap limit is hit, with the heap profile of that moment; the
   * process dies of it afterwards unless the app frees memory.
   */
  outOfMemory?: (part: WindowPart) => void;
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
  /** Whether the heap limit is watched: the profile of that moment will be handed to `outOfMemory`. */
  watchesOutOfMemory = false;

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
    const { outOfMemory } = this.options;
    if (outOfMemory) {
      const { isMainThread } = process.getBuiltinModule('node:worker_threads') as typeof import('node:worker_threads');
      // The callback interrupts whatever JavaScript runs at the limit: nothing may throw out of it into the app.
      const atLimit = (tree: AllocationProfileNode) => {
        try {
          outOfMemory(this.partOf({ tree, externalBytes: process.memoryUsage().external }));
        } catch {
          // Dying of it anyway; the app's own error is the one to see.
        }
      };
      try {
        bindings.monitorOutOfMemory(OUT_OF_MEMORY_EXTENSION_BYTES, 1, false, [], atLimit, CALLBACK_INTERRUPT, isMainThread, false);
        this.watchesOutOfMemory = true;
      } catch {
        // The heap profile goes on without its last word at the limit (boot says so).
      }
    }
  }

  cut(last: boolean): WindowPart | undefined {
    const bindings = this.bindings;
    if (bindings === undefined) return undefined;
    const snapshot = this.afterCollection ?? this.snapshot(bindings);
    this.afterCollection = undefined;
    if (last) {
      this.observer?.disconnect();
      bindings.stopSamplingHeapProfiler();
      this.bindings = undefined;
    } else {
      this.watchCollections();
    }
    return this.partOf(snapshot);
  }

  private partOf({ tree, externalBytes }: Snapshot): WindowPart {
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
