import type { Worker } from 'node:worker_threads';
import type { FlushJob } from './flush-worker.js';
import type { Outgoing, Transport } from './outgoing.js';

export interface FlushResult {
  sent: number;
  failed: number;
  /** True when the deadline passed before every request had an answer. */
  timedOut: boolean;
}

/**
 * Sends the last requests synchronously, within the deadline. Used from process 'exit' and from
 * signal handlers, where no more event-loop turns are coming: a worker thread does the I/O and
 * this thread sleeps in Atomics.wait until it is done or the deadline passes. Never throws.
 * `transport` is the steady-state sender's, so the worker connects exactly as it does (same
 * certificate checks, connect timeout and proxies).
 */
export function sendBeforeExit(requests: Outgoing[], deadlineAt: number, transport: Transport): FlushResult {
  if (requests.length === 0) return { sent: 0, failed: 0, timedOut: false };
  const shared = new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT);
  const slots = new Int32Array(shared);
  const job: FlushJob = { requests, deadlineAt, shared, transport };
  let worker: Worker | undefined;
  try {
    const { Worker } = process.getBuiltinModule('node:worker_threads');
    worker = new Worker(new URL('./flush-worker.js', import.meta.url), { workerData: job, stdout: true, stderr: true });
    worker.unref();
    const wait = Math.max(0, deadlineAt - Date.now());
    const outcome = Atomics.wait(slots, 0, 0, wait);
    const done = outcome !== 'timed-out';
    // A worker that answers right at the deadline (it started late on a loaded machine, and had no
    // time left to send) ran out of time as much as one that did not answer.
    const late = !done || Date.now() >= deadlineAt;
    return { sent: Atomics.load(slots, 1), failed: done ? Atomics.load(slots, 2) : requests.length - Atomics.load(slots, 1), timedOut: late };
  } catch {
    return { sent: 0, failed: requests.length, timedOut: false };
  } finally {
    void worker?.terminate().catch(() => undefined);
  }
}
