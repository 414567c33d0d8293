import type { LogLevel, ProfileType, SpanScope } from '../config/index.js';
import type { AllocationProfileNode } from '@datadog/pprof/out/src/v8-types.js';
import type { FoldShipment } from '../profiling/fold-shipment.js';

/**
 * How the agents of a process's threads talk: each worker thread's agent sends to the main thread's
 * over one BroadcastChannel (process-wide by name: nested workers reach the main thread directly,
 * and nothing crosses a port the app can see), each message tagged as pyro-run's own (`Own`): the
 * main thread takes it where its MessagePorts dispatch (message-links.ts), before the channel makes
 * an event of it (whose class loads Node's fetch implementation). The main thread asks the workers
 * through a counter they wait on (`Atomics.waitAsync`, which keeps no thread alive). What every
 * thread needs from the start comes through worker_threads' environment data, which a worker
 * inherits from the thread that created it.
 */

/** Workers → main thread. */
export const HUB_CHANNEL = 'pyro-run:threads:1:hub';
/** The environment data key of `ThreadsShared`: set by the main thread's agent, absent without one. */
export const SHARED_KEY = 'pyro-run:threads:1';
/**
 * The environment data key of the `execArgv` a worker would have had without pyro-run: set for
 * each worker as it is made (worker-spawn.ts); the worker's preload makes it the worker's
 * `process.execArgv` again and drops the key.
 */
export const EXEC_ARGV_KEY = 'pyro-run:threads:1:execArgv';
/** First element of a message between agents: `[OWN, message]`; an app cannot make one by chance (the NUL). */
export const OWN = '\u0000pyro-run:own:1';
export type Own = [typeof OWN, ToMain];
export const isOwn = (value: unknown): value is Own => Array.isArray(value) && value.length === 2 && value[0] === OWN;

/** What every agent of the process shares, set by the main thread's agent before any worker starts. */
export interface ThreadsShared {
  /**
   * Int32Array over a SharedArrayBuffer: [EVERY_THREAD_UNWRAPS] is 1 while every thread runs the
   * preload (so takes a message's envelope off, message-links.ts); the main thread asks every
   * worker to ship what it sampled by adding one to [COLLECT], and [COLLECTED] counts the workers
   * that did.
   */
  flags: Int32Array;
  /** Whether the main thread traces: then a worker's agent links the spans of the app's own tracing in the worker (worker-otel.ts). */
  tracing: boolean;
  /** The main thread's settings a worker's agent works by: the same in every thread, whatever environment the app gives a worker. */
  settings: WorkerSettings;
}

export interface WorkerSettings {
  profiles: readonly ProfileType[];
  flushIntervalMs: number;
  heap: { intervalBytes: number; stackDepth: number };
  samplingIntervalMicros: number;
  traceIdLabel: boolean;
  spanScope: SpanScope;
  logLevel: LogLevel;
}
export const EVERY_THREAD_UNWRAPS = 0;
export const COLLECT = 1;
export const COLLECTED = 2;
export const FLAG_COUNT = 3;

/** What a worker's agent tells the main thread's. */
export type ToMain =
  | { type: 'hello'; thread: number }
  /** Its samples since the last shipment, with the thread's name for its `thread_name`. */
  | { type: 'samples'; thread: number; name: string; shipment: FoldShipment }
  /** Its heap in use (the heap profile), as of its latest full collection: once a window. */
  | { type: 'heap'; thread: number; name: string; tree: AllocationProfileNode }
  /** A line for pyro-run's log (said once for the process however many workers say it). */
  | { type: 'log'; line: string }
  | { type: 'bye'; thread: number };
