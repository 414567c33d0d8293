import type { MessagePort, Worker } from 'node:worker_threads';
import { type Logger, reason } from '../../log.js';
import { type MergedProfile, mergeWindowParts, type WindowPart } from './window-merge.js';

/** What the merge thread is started with: the port its requests come on and its answers go back by. */
export interface MergeThreadData {
  port: MessagePort;
}

export interface MergeRequest {
  id: number;
  parts: WindowPart[];
}

export type MergeAnswer = { id: number; merged: MergedProfile[] } | { id: number; error: string };

const SCRIPT = new URL('./merge-worker.js', import.meta.url);
/** A thread that does not answer a merge in this long is taken as failed: the windows waiting in memory for it are not held longer. */
const ANSWER_WITHIN_MS = 60_000;

interface Waiting {
  parts: WindowPart[];
  resolve: (merged: MergedProfile[]) => void;
  reject: (error: unknown) => void;
  timer: NodeJS.Timeout;
}

/**
 * Merges profile windows (window-merge.ts: reading, decoding, merging, encoding) off the app's
 * thread, in a worker thread of pyro-run's own started at the first merge. The app does not see
 * it: it is started without the preload (no `execArgv`, no NODE_OPTIONS), so it runs no agent and
 * is neither profiled nor one of the app's threads; it keeps no process alive; what it might
 * print goes nowhere; and the app's `process.on('worker')` does not hear of it (only
 * diagnostics_channel's `worker_threads`, a tool's view, does). Should it not start or fail, that
 * is said once and windows are merged on the app's thread from then on, as thinning must go on.
 */
export class MergeThread {
  private worker: Worker | undefined;
  private port: MessagePort | undefined;
  private readonly waiting = new Map<number, Waiting>();
  private lastId = 0;
  /** Merges are done on this thread: the merge thread failed, or it was stopped. */
  private here = false;

  constructor(
    private readonly log: Logger,
    private readonly script: URL = SCRIPT,
  ) {}

  /** `parts` merged (mergeWindowParts); rejects when they cannot be (a profile that does not decode). */
  merge(parts: WindowPart[]): Promise<MergedProfile[]> {
    if (!this.here && this.port === undefined) this.start();
    const port = this.port;
    if (this.here || port === undefined) return mergedHere(parts);
    return new Promise((resolve, reject) => {
      const id = ++this.lastId;
      const timer = setTimeout(() => this.failed(new Error(`it did not answer within ${ANSWER_WITHIN_MS / 1000} s`)), ANSWER_WITHIN_MS).unref();
      this.waiting.set(id, { parts, resolve, reject, timer });
      port.postMessage({ id, parts } satisfies MergeRequest);
    });
  }

  /** Ends the thread; a merge still waited for is given up (rejected). */
  stop(): void {
    this.here = true;
    this.port?.close();
    void this.worker?.terminate().catch(() => undefined);
    for (const job of this.takeWaiting()) job.reject(new Error('the merge thread was stopped'));
  }

  private start(): void {
    try {
      const threads = process.getBuiltinModule('node:worker_threads') as typeof import('node:worker_threads');
      // A port of its own, not the Worker's: a 'message' listener on a Worker holds the process open, unref'd or not.
      const { port1, port2 } = new threads.MessageChannel();
      const data: MergeThreadData = { port: port2 };
      const worker = unannounced(
        () =>
          new threads.Worker(this.script, {
            execArgv: [],
            env: {},
            stdout: true,
            stderr: true,
            name: 'pyro-run merge',
            workerData: data,
            transferList: [port2],
          }),
      );
      worker.unref();
      worker.on('error', (error) => this.failed(error));
      worker.on('exit', (code) => this.failed(new Error(`it exited with code ${code}`)));
      port1.on('message', (answer: MergeAnswer) => this.answered(answer));
      // After the listener, which refs the port.
      port1.unref();
      this.worker = worker;
      this.port = port1;
    } catch (error) {
      this.failed(error);
    }
  }

  private answered(answer: MergeAnswer): void {
    const job = this.waiting.get(answer.id);
    if (job === undefined) return;
    this.waiting.delete(answer.id);
    clearTimeout(job.timer);
    if ('error' in answer) job.reject(new Error(answer.error));
    else job.resolve(answer.merged);
  }

  /** The thread is gone: said once; what it was merging is merged here, and so is every merge from now on. */
  private failed(error: unknown): void {
    if (this.here) return;
    this.here = true;
    this.port?.close();
    void this.worker?.terminate().catch(() => undefined);
    this.log.warnOnce(
      'merge-thread',
      `could not merge profile windows in a thread of their own (${reason(error)}); they are merged on the app's thread from now on`,
    );
    for (const job of this.takeWaiting()) mergedHere(job.parts).then(job.resolve, job.reject);
  }

  private takeWaiting(): Waiting[] {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const job of waiting) clearTimeout(job.timer);
    return waiting;
  }
}

function mergedHere(parts: readonly WindowPart[]): Promise<MergedProfile[]> {
  return new Promise((resolve) => resolve(mergeWindowParts(parts)));
}

/**
 * A worker started without the app hearing of it: Node announces every new worker on process
 * 'worker' in the next tick (lib/internal/worker.js), which skips this one and then steps aside.
 */
function unannounced(start: () => Worker): Worker {
  const emit = process.emit;
  let ours: Worker | undefined;
  const quiet = function (this: unknown, event: string | symbol, worker?: unknown) {
    if (event !== 'worker' || worker !== ours || ours === undefined) return Reflect.apply(emit, this, arguments) as boolean;
    if (process.emit === quiet) process.emit = emit;
    return false;
  } as typeof process.emit;
  process.emit = quiet;
  try {
    ours = start();
    return ours;
  } catch (error) {
    process.emit = emit;
    throw error;
  }
}
