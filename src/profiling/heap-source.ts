import type { PerformanceObserver } from 'node:perf_hooks';
import type { AllocationProfileNode } from '@datadog/pprof/out/src/v8-types.js';
import { buildHeapProfile, type HeapBindings, heapBindings } from './heap-profile.js';
import type { ProfileSource } from './profile-source.js';
import type { OtherThread, WindowPart } from './profile-window.js';

import { MAIN_THREAD_NAME } from '../wire.js';

/**
 * CallbackMode.Interrupt of @datadog/pprof: the callback runs at the limit even in code that never
 * returns to the event loop, as soon as a function is entered (an await's resumption counts). A
 * loop V8 has optimized with every call inlined enters none: it runs on to the raised limit and
 * the process dies without the callback (docs/memory.md).
 */
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

/** Memory outside V8's heap (Buffers, ArrayBuffers), shown as one frame as @datadog/pprof does. */
const EXTERNAL_FRAME = '(external)';

export interface Snapshot {
  tree: AllocationProfileNode;
  externalBytes: number;
}

/**
 * The in-use memory profile: V8's sampling heap profiler, which keeps every sampled allocation
 * until the garbage collector frees it — so what it holds at an arbitrary moment includes the
 * garbage no collection has freed yet, which under an app's churn can be several times what is
 * retained (measured: 100 MB retained read as 120–420 MB). So, as Go's heap profile reports
 * memory as of the last collection, a window's profile is the one read just after the latest full
 * collection: the first mark-compact of the window (a `gc` performance entry; one read per window,
 * ~1–4 ms for 64–256 MB of heap), else that of an earlier window, and only before the first
 * collection what is there at the cut. Its samples carry no span: V8 records no context with an
 * allocation sample (docs/memory.md).
 */
export class HeapSource implements ProfileSource {
  private bindings: HeapBindings | undefined;
  private observer: PerformanceObserver | undefined;
  /** The snapshot read after the latest full collection. */
  private afterCollection: Snapshot | undefined;
  /** Whether the heap limit is watched: the profile of that moment will be handed to `outOfMemory`. */
  watchesOutOfMemory = false;
  /** Other threads' latest heaps (the workers'), by thread. */
  private readonly others = new Map<number, { thread: string; tree: AllocationProfileNode }>();

  constructor(private readonly options: HeapSourceOptions) {}

  start(): void {
    const bindings = heapBindings();
    bindings.startSamplingHeapProfiler(this.options.intervalBytes, this.options.stackDepth);
    this.bindings = bindings;
    const { PerformanceObserver, constants } = process.getBuiltinModule('node:perf_hooks') as typeof import('node:perf_hooks');
    // Every full collection is read: one V8 began while the app was still building up memory
    // holds only part of what the window ends with. A read walks the sampled allocations (one per
    // intervalBytes on average), small beside the collection itself.
    this.observer = new PerformanceObserver((entries) => {
      if (this.bindings === undefined) return;
      if (!entries.getEntries().some((entry) => (entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) return;
      try {
        this.afterCollection = this.snapshot(this.bindings);
      } catch {
        // The cut reads it instead.
      }
    });
    this.observer.observe({ type: 'gc' });
    const { outOfMemory } = this.options;
    if (outOfMemory) {
      const { isMainThread } = process.getBuiltinModule('node:worker_threads') as typeof import('node:worker_threads');
      // The callback interrupts whatever JavaScript runs at the limit: nothing may throw out of it into the app.
      const atLimit = (tree: AllocationProfileNode) => {
        try {
          outOfMemory(this.partOf(snapshotOf(tree)));
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
    const snapshot = this.take(last);
    return snapshot && this.partOf(snapshot);
  }

  /**
   * The heap as of the latest full collection (else now); with `last`, sampling stops for good.
   * Undefined when not sampling.
   */
  take(last: boolean): Snapshot | undefined {
    const bindings = this.bindings;
    if (bindings === undefined) return undefined;
    const snapshot = this.afterCollection ?? this.snapshot(bindings);
    if (last) {
      this.observer?.disconnect();
      bindings.stopSamplingHeapProfiler();
      this.bindings = undefined;
    }
    return snapshot;
  }

  /** The latest heap another thread sent (its own memory: no external part), in this thread's windows until it ends. */
  setThread(thread: OtherThread, tree: AllocationProfileNode | undefined): void {
    if (tree === undefined) this.others.delete(thread.key);
    else this.others.set(thread.key, { thread: thread.name, tree });
  }

  private partOf(snapshot: Snapshot): WindowPart {
    return inUsePart(
      [{ thread: MAIN_THREAD_NAME, snapshot }, ...[...this.others.values()].map(({ thread, tree }) => ({ thread, snapshot: { tree, externalBytes: 0 } }))],
      this.options.intervalBytes,
    );
  }

  private snapshot(bindings: HeapBindings): Snapshot {
    return snapshotOf(bindings.getAllocationProfile() as AllocationProfileNode);
  }
}

/** A tree read now, with the memory outside V8's heap at this moment. */
function snapshotOf(tree: AllocationProfileNode): Snapshot {
  return { tree, externalBytes: process.memoryUsage().external };
}

/**
 * Heap snapshots as a window part, one per thread (the main thread's first): one sample per object
 * size of a node, valued [objects, bytes]; memory outside V8's heap (Buffers, ArrayBuffers, the
 * process's: the main thread's snapshot has it) is one `(external)` frame, as @datadog/pprof shows
 * it.
 */
export function inUsePart(threads: readonly { thread: string; snapshot: Snapshot }[], intervalBytes: number): WindowPart {
  const roots = threads.map(({ thread, snapshot: { tree, externalBytes } }) => ({
    thread,
    roots: externalBytes > 0 ? [...tree.children, externalNode(externalBytes)] : tree.children,
  }));
  return {
    build: (from, sourceMapper) => buildHeapProfile('heap', roots, ({ sizeBytes, count }) => [count, sizeBytes * count], from, intervalBytes, sourceMapper),
  };
}

function externalNode(bytes: number): AllocationProfileNode {
  return { name: EXTERNAL_FRAME, scriptName: '', scriptId: 0, lineNumber: 0, columnNumber: 0, allocations: [{ sizeBytes: bytes, count: 1 }], children: [] };
}
