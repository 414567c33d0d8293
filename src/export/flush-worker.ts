/**
 * Runs in a worker thread while the main thread blocks in Atomics.wait at exit: the main thread's
 * event loop cannot turn any more (we are inside process 'exit' or a signal handler), so the last
 * uploads are made here. Counts are written to the shared buffer, then the waiter is woken.
 */
import { workerData } from 'node:worker_threads';
import type { Outgoing } from './outgoing.js';

export interface FlushJob {
  requests: Outgoing[];
  deadlineAt: number;
  /** Int32Array over it: [done, sent, failed]. */
  shared: SharedArrayBuffer;
}

const job = workerData as FlushJob;
const slots = new Int32Array(job.shared);

async function send(request: Outgoing): Promise<boolean> {
  const remaining = job.deadlineAt - Date.now();
  if (remaining <= 0) return false;
  try {
    const response = await fetch(request.url, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
      signal: AbortSignal.timeout(remaining),
    });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

const results = await Promise.all(job.requests.map(send));
Atomics.store(slots, 1, results.filter(Boolean).length);
Atomics.store(slots, 2, results.filter((ok) => !ok).length);
Atomics.store(slots, 0, 1);
Atomics.notify(slots, 0);
