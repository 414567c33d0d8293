/**
 * Starts the app and waits for it. No shell: arguments reach the app exactly as given, with no
 * word splitting, globbing or `$()` expansion.
 */
import { spawn } from 'node:child_process';
import type { Launch } from './argv.js';
import { relaySignals, type Outcome } from './signals.js';

/** Shell conventions, so scripts that check `$?` read pyro-run like they read a shell. */
export const EXIT_COMMAND_NOT_FOUND = 127;
export const EXIT_CANNOT_EXECUTE = 126;

export type RunResult = Outcome | { failed: string; exitCode: number };

/**
 * Runs the launch with inherited stdio and relays signals while it lives. Resolves once the
 * child is gone (relay removed by then), or with `failed` when it could not be started.
 */
export function run(launch: Launch, relayToTree = false): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(launch.file, launch.args, { stdio: 'inherit', env: launch.env });
    const stopRelay = relaySignals(child, relayToTree);
    let settled = false;
    const settle = (result: RunResult) => {
      if (settled) return;
      settled = true;
      stopRelay();
      resolve(result);
    };

    child.on('error', (error: NodeJS.ErrnoException) => {
      // After a successful start, 'error' only means a kill() failed; 'exit' still follows.
      if (child.pid !== undefined) return;
      if (error.code === 'ENOENT') settle({ failed: `command not found: ${launch.file}`, exitCode: EXIT_COMMAND_NOT_FOUND });
      else if (error.code === 'EACCES') settle({ failed: `permission denied: ${launch.file}`, exitCode: EXIT_CANNOT_EXECUTE });
      else settle({ failed: `cannot run ${launch.file}: ${error.message}`, exitCode: EXIT_CANNOT_EXECUTE });
    });
    child.on('exit', (code, signal) => {
      settle(signal !== null ? { signal } : { code: code ?? 0 });
    });
  });
}
