/**
 * The preload: `node --import pyro-run/register app.js` (or `--require`, or NODE_OPTIONS).
 * Tiny on purpose: it decides whether to start, then hands over to src/agent/start.ts, which loads the
 * heavy parts only when they are needed. Started once per process (a second load is a no-op) and
 * only on the main thread: workers inherit execArgv and would otherwise start a second agent.
 */
import { isMainThread } from 'node:worker_threads';
import { start } from './src/agent/start.js';

const STARTED = Symbol.for('pyro-run.started');
const global = globalThis as { [STARTED]?: boolean };

if (isMainThread && !global[STARTED]) {
  global[STARTED] = true;
  try {
    start();
  } catch (error) {
    process.stderr.write(`pyro-run: warning: could not start (${error instanceof Error ? error.message : String(error)}); the app runs without tracing or profiling\n`);
  }
}
