/**
 * Runs in a worker thread while the main thread blocks in Atomics.wait at exit: the main thread's
 * event loop cannot turn any more (we are inside process 'exit' or a signal handler), so the last
 * uploads are made here. Counts are written to the shared buffer, then the waiter is woken.
 *
 * Requests go out through undici with the same Agent recipe as the steady-state sender
 * (dispatcher.ts createAgent): same certificate checks, same proxies, same treatment of URL credentials.
 */
import { workerData } from 'node:worker_threads';
import { createAgent } from './dispatcher.js';
import { type Outgoing, type Transport, releaseReply } from './outgoing.js';
import { loadUndici } from './undici-parts.js';

export interface FlushJob {
  requests: Outgoing[];
  deadlineAt: number;
  /** Int32Array over it: [done, sent, failed]. */
  shared: SharedArrayBuffer;
  transport: Transport;
}

const job = workerData as FlushJob;
const slots = new Int32Array(job.shared);

async function main(): Promise<boolean[]> {
  const undici = loadUndici();
  const remaining = Math.max(1, job.deadlineAt - Date.now());
  // The deadline bounds everything here: connecting included.
  const dispatcher = createAgent(undici, { ...job.transport, timeoutMs: Math.min(job.transport.timeoutMs, remaining) }, { unrefSockets: false });

  const send = async (request: Outgoing): Promise<boolean> => {
    const left = Math.min(job.deadlineAt - Date.now(), request.timeoutMs ?? Number.POSITIVE_INFINITY);
    if (left <= 0) return false;
    try {
      const response = await undici.post(dispatcher, request, AbortSignal.timeout(left));
      releaseReply(response.body);
      return response.statusCode >= 200 && response.statusCode < 300;
    } catch {
      return false;
    }
  };
  return Promise.all(job.requests.map(send));
}

let results: boolean[];
try {
  results = await main();
} catch {
  results = job.requests.map(() => false);
}
Atomics.store(slots, 1, results.filter(Boolean).length);
Atomics.store(slots, 2, results.filter((ok) => !ok).length);
Atomics.store(slots, 0, 1);
Atomics.notify(slots, 0);
