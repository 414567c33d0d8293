/**
 * A worker thread's preload (worker-spawn.ts gives it to every worker with `--require`): its agent
 * only, a module of its own so a worker does not load the main thread's agent. Started once per
 * thread (the mark the main thread's preload sets in pyro-run's global, which may run in the worker too); never
 * throws. On a main thread — a process started with a worker's `execArgv` — it is the main
 * thread's preload.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import * as threads from 'node:worker_threads';
import { EXEC_ARGV_KEY } from './protocol.js';
import { globalState } from '../util/global-state.js';
import { MAIN_PRELOAD_URL } from '../preloads.js';
import { startWorker } from './worker-agent.js';

if (threads.isMainThread) {
  createRequire(import.meta.url)(fileURLToPath(MAIN_PRELOAD_URL));
} else {
  restoreExecArgv();
  if (!(threads as { isInternalThread?: boolean }).isInternalThread && !globalState().started) {
    globalState().started = true;
    try {
      startWorker();
    } catch (error) {
      process.stderr.write(
        `pyro-run: warning: could not start in a worker thread (${error instanceof Error ? error.message : String(error)}); it runs without profiling\n`,
      );
    }
  }
}

/** The worker's `process.execArgv` as without pyro-run (worker-spawn.ts says what it was); the key is not left for the app, or for the workers this one starts. */
function restoreExecArgv(): void {
  const bare = threads.getEnvironmentData(EXEC_ARGV_KEY);
  if (!Array.isArray(bare)) return;
  threads.setEnvironmentData(EXEC_ARGV_KEY, undefined as never);
  process.execArgv.splice(0, process.execArgv.length, ...(bare as string[]));
}
