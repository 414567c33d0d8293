import { Logger, reason } from '../log.js';
import { HeapSource } from '../profiling/heap-source.js';
import { TimeSource } from '../profiling/time-source.js';
import { frameLinker } from '../span-link/frame-context.js';
import { fitLabelValue, LabelRegistry, spanOfSample } from '../span-link/labels.js';
import { NO_OWNER, type SampleOwner } from '../span-link/linking.js';
import { slotLinker } from '../span-link/slot-context.js';
import { MAIN_THREAD_NAME } from '../wire.js';
import { COLLECT, COLLECTED, EVERY_THREAD_UNWRAPS, HUB_CHANNEL, OWN, type Own, SHARED_KEY, type ThreadsShared, type ToMain } from './protocol.js';
import { RecentWork } from './recent-work.js';
import { SpanDirectory } from './span-directory.js';
import { hookThread } from './thread-hooks.js';
import { watchWorkerOtel } from './worker-otel.js';

/**
 * How often a worker ships its samples to the main thread. A worker the app terminates runs no
 * more JavaScript (no exit event), so what it sampled since its last shipment is lost: this bounds
 * that, at the cost of one stop of its sampler a second.
 */
const SHIP_EVERY_MS = 1000;
/**
 * After the app posts a message from a worker (a pool's worker posts each task's result), its
 * samples are shipped right away if the last shipment is this old, else this long after it: a pool
 * terminates a worker that went idle, often a millisecond after its last result; and piscina's and
 * tinypool's workers wait for their next task in `Atomics.wait`, where no timer of the thread runs.
 * Not more often: each stop of the sampler loses the CPU time between its last sample and the
 * stop (up to a sampling interval), which every 50 ms was a tenth of a busy worker's.
 */
const SHIP_AFTER_POST_MS = 250;

/** The name a worker's samples carry: its `name` option, else `worker <threadId>` (Node 24+ names unnamed workers `WorkerThread`). */
export function workerThreadName(threadId: number, threadName: string | undefined): string {
  return threadName && threadName !== 'WorkerThread' && threadName !== MAIN_THREAD_NAME ? fitLabelValue(threadName) : `worker ${threadId}`;
}

/**
 * A worker thread's agent, when the main thread's agent takes workers' samples: it shares what they
 * need, its settings among them, through the environment data (protocol.ts); without it there is
 * nothing to do. The worker's log lines are said by the main thread's logger, which scrubs secrets.
 * Never throws: a worker that could not start its agent sends no envelope anywhere from then on.
 */
export function startWorker(): void {
  const threads = process.getBuiltinModule('node:worker_threads') as typeof import('node:worker_threads');
  const shared = threads.getEnvironmentData(SHARED_KEY) as ThreadsShared | undefined;
  if (shared === undefined) return;
  const log = new Logger(shared.settings.logLevel, undefined, (line) => postToMain({ type: 'log', line }));
  try {
    startWorkerAgent(shared, log);
  } catch (error) {
    // Envelopes this worker might not take off are sent no more (message-links.ts).
    Atomics.store(shared.flags, EVERY_THREAD_UNWRAPS, 0);
    log.warnOnce('worker-agent', `could not start in a worker thread (${reason(error)}); it runs without profiling`);
  }
}

/**
 * The agent of a worker thread: no tracing, exporter or uploader of its own. It samples the
 * thread's CPU and wall time, labels the samples of the work it does for a message with the span
 * of whoever posted it, and ships its samples to the main thread's agent (protocol.ts), which
 * exports them with its own, labelled with the worker's `thread_name`. The workers it starts run
 * the preload too.
 */
function startWorkerAgent(shared: ThreadsShared, log: Logger): void {
  const config = shared.settings;
  const threads = process.getBuiltinModule('node:worker_threads') as typeof import('node:worker_threads');
  const thread = threads.threadId;
  const name = workerThreadName(thread, (threads as { threadName?: string }).threadName);
  const recent = new RecentWork();
  const { time, owner } = startSampling(shared, recent, log);
  const heap = startHeap(config, log);
  const directory = new SpanDirectory();

  /** When the worker's heap last went to the main thread: at the first shipment, then once a window, and at the end. */
  let heapShippedAt = Number.NEGATIVE_INFINITY;
  let lastShipAt = performance.now();
  let soon: NodeJS.Timeout | undefined;
  const ship = (last: boolean): void => {
    lastShipAt = performance.now();
    try {
      const shipment = time?.ship(last);
      const dropped = time?.droppedAtLastStop(name);
      if (dropped !== undefined) log.warnOnce('worker-sampler-dropped', dropped);
      directory.sweep();
      if (shipment) postToMain({ type: 'samples', thread, name, shipment });
      if (heap !== undefined && (last || lastShipAt - heapShippedAt >= config.flushIntervalMs)) {
        heapShippedAt = lastShipAt;
        const snapshot = heap.take(last);
        if (snapshot) postToMain({ type: 'heap', thread, name, tree: snapshot.tree });
      }
    } catch (error) {
      log.warnOnce('worker-ship', `could not hand a worker thread's samples over: ${reason(error)}`);
    }
  };
  const sampling = time !== undefined || heap !== undefined;
  const shipAfterPost = (): void => {
    if (!sampling) return;
    const wait = lastShipAt + SHIP_AFTER_POST_MS - performance.now();
    if (wait <= 0) {
      clearTimeout(soon);
      soon = undefined;
      ship(false);
      return;
    }
    if (soon !== undefined) return;
    soon = setTimeout(() => {
      soon = undefined;
      ship(false);
    }, wait);
    soon.unref();
  };

  // Even without a sampler, the worker takes envelopes off and starts its workers with the preload.
  hookThread({
    shared,
    owner,
    directory,
    log,
    ownLabels: () => undefined,
    afterPost: shipAfterPost,
    terminated: (id) => postToMain({ type: 'bye', thread: id }),
  });
  if (!sampling) return;
  postToMain({ type: 'hello', thread });
  const every = setInterval(() => ship(false), SHIP_EVERY_MS);
  every.unref();
  answerCollects(shared.flags, () => ship(false));
  // Before the sampler's own exit listener, which stops it for good.
  process.prependListener('exit', () => {
    clearInterval(every);
    clearTimeout(soon);
    ship(true);
    postToMain({ type: 'bye', thread });
  });
}

/** The CPU and wall sampler, and the linking of its samples to spans (none where it cannot start: the owner then labels nothing). */
function startSampling(shared: ThreadsShared, recent: RecentWork, log: Logger): { time: TimeSource | undefined; owner: SampleOwner } {
  const config = shared.settings;
  const types = config.profiles.filter((type) => type === 'cpu' || type === 'wall');
  if (types.length === 0) return { time: undefined, owner: NO_OWNER };
  try {
    const time = new TimeSource({
      types,
      intervalMicros: config.samplingIntervalMicros,
      flushIntervalMs: SHIP_EVERY_MS,
      traceIdLabel: config.traceIdLabel,
      spanOf: spanOfSample(config.samplingIntervalMicros),
      workBetween: (from, to) => recent.between(from, to),
    });
    time.start();
    if (!time.linksSamples) return { time, owner: NO_OWNER };
    const registry = new LabelRegistry();
    const linking = time.frameSlot ? frameLinker(registry, time.frameSlot) : slotLinker(registry, time.globalSlot);
    if (shared.tracing) watchWorkerOtel(registry, linking.linkContext, config.spanScope, log);
    return { time, owner: recent.recording(linking.owner) };
  } catch (error) {
    log.warnOnce('worker-profiler', `profiler unavailable in worker threads (${reason(error)}); they run unprofiled`);
    return { time: undefined, owner: NO_OWNER };
  }
}

/** The heap sampler, when the heap profile is on. */
function startHeap(config: ThreadsShared['settings'], log: Logger): HeapSource | undefined {
  if (!config.profiles.includes('heap')) return undefined;
  try {
    const heap = new HeapSource(config.heap);
    heap.start();
    return heap;
  } catch (error) {
    log.warnOnce('worker-heap', `the heap profile is unavailable in worker threads (${reason(error)}); the main thread's goes on`);
    return undefined;
  }
}

/** Whenever the main thread asks (protocol.ts COLLECT), ships and counts itself in. Waiting keeps no thread alive. */
function answerCollects(flags: Int32Array, ship: () => void): void {
  let asked = Atomics.load(flags, COLLECT);
  const wait = (): void => {
    const waited = Atomics.waitAsync(flags, COLLECT, asked);
    if (!waited.async) {
      answer();
      return;
    }
    void waited.value.then(answer);
  };
  const answer = (): void => {
    asked = Atomics.load(flags, COLLECT);
    ship();
    Atomics.add(flags, COLLECTED, 1);
    Atomics.notify(flags, COLLECTED);
    wait();
  };
  wait();
}

/**
 * One message to the main thread's agent, on a channel of its own closed at once: a channel open in
 * every worker would take every other worker's samples too.
 */
export function postToMain(message: ToMain): void {
  const { BroadcastChannel } = process.getBuiltinModule('node:worker_threads') as typeof import('node:worker_threads');
  const hub = new BroadcastChannel(HUB_CHANNEL);
  try {
    hub.postMessage([OWN, message] satisfies Own);
  } finally {
    hub.close();
  }
}
