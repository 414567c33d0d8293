import type { Logger } from '../log.js';
import type { HeapSource } from '../profiling/heap-source.js';
import type { TimeSource } from '../profiling/time-source.js';
import type { SampleOwner } from '../span-link/linking.js';
import type { Pools } from './pools/index.js';
import { EVERY_THREAD_UNWRAPS, FLAG_COUNT, SHARED_KEY, type ThreadsShared, type WorkerSettings } from './protocol.js';
import { SpanDirectory } from './span-directory.js';
import { hookThread } from './thread-hooks.js';
import { ThreadHub } from './thread-hub.js';

/** What the agent does with the other threads over time: forget spans at each window, collect the workers' last samples at the end. */
export interface Threads {
  /** A window was cut. */
  sweep(): void;
  collectSync(deadlineAt: number): void;
  collectAsync(deadlineAt: number): Promise<void>;
}

export interface MainThreadParts {
  /** The time sampler, when the CPU or wall profile is on: the workers' samples go into its windows. */
  time?: TimeSource | undefined;
  /** The heap sampler, when the heap profile is on: the workers' heaps go into its windows too. */
  heap?: HeapSource | undefined;
  owner: SampleOwner;
  log: Logger;
  /** The pools whose tasks carry their submitter's span (pools/), once the package hooks run. */
  pools?: Pools;
  /** Whether this thread traces (its spans are what the workers' samples link to). */
  tracing: boolean;
  settings: WorkerSettings;
}

/**
 * The main thread's side of every thread profiled: the workers the app starts run the preload and
 * ship their samples here (thread-hub.ts), into the window being recorded, labelled with their
 * `thread_name`; the messages the app posts carry the span they were posted in (message-links.ts).
 * Set up before the app's first line: a worker's first message must find the hub open.
 */
export function startThreads(parts: MainThreadParts): Threads {
  const threads = process.getBuiltinModule('node:worker_threads') as typeof import('node:worker_threads');
  const flags = new Int32Array(new SharedArrayBuffer(FLAG_COUNT * Int32Array.BYTES_PER_ELEMENT));
  flags[EVERY_THREAD_UNWRAPS] = 1;
  const shared: ThreadsShared = { flags, tracing: parts.tracing, settings: parts.settings };
  const directory = new SpanDirectory();
  const hub = new ThreadHub({
    flags,
    addShipment: (thread, shipment, spanOfLabels) => parts.time?.addShipment(thread, shipment, spanOfLabels),
    labelsOf: (labels) => directory.labelsOf(labels),
    setHeap: (thread, tree) => parts.heap?.setThread(thread, tree),
    write: (line) => parts.log.relay(line),
  });
  hookThread({
    shared,
    owner: parts.owner,
    directory,
    log: parts.log,
    submitter: parts.pools?.submitter,
    ownLabels: () => parts.owner.current(),
    terminated: (id) => hub.forget(id),
    ownMessages: (message) => hub.take(message),
  });
  threads.setEnvironmentData(SHARED_KEY, shared);
  return {
    sweep: () => directory.sweep(),
    collectSync: (deadlineAt) => hub.collectSync(deadlineAt),
    collectAsync: (deadlineAt) => hub.collectAsync(deadlineAt),
  };
}
