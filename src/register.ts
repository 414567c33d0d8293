/**
 * The preload: `node --import pyro-run/register app.js` (or `--require`, or NODE_OPTIONS).
 * Tiny on purpose: it decides whether to start, then hands over to src/agent/start.ts, which loads the
 * heavy parts only when they are needed. Started once per thread (a second load is a no-op): the
 * main thread's agent, or a worker thread's (the main thread's agent has every worker run this
 * preload, threads/worker-spawn.ts); never in Node's own internal threads (the module hooks').
 */
import * as threads from 'node:worker_threads';
import { start, startWorker } from './agent/start.js';
import { globalState } from './util/global-state.js';

if (!(threads as { isInternalThread?: boolean }).isInternalThread && !globalState().started) {
  globalState().started = true;
  try {
    if (threads.isMainThread) start();
    else startWorker();
  } catch (error) {
    process.stderr.write(
      `pyro-run: warning: could not start (${error instanceof Error ? error.message : String(error)}); the app runs without tracing or profiling\n`,
    );
  }
}
