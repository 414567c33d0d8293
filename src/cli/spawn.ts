/**
 * Starts the app and waits for it. No shell: arguments reach the app exactly as given, with no
 * word splitting, globbing or `$()` expansion.
 */
import { spawn, type StdioOptions } from 'node:child_process';
import { formatLifeline, LIFELINE_ENV, LIFELINE_FD, ownSession } from '../agent/lifeline.js';
import type { Launch } from './argv.js';
import { ChildTree } from './child-tree.js';
import { relaySignals, type Outcome } from './signals.js';

/** Shell conventions, so scripts that check `$?` read pyro-run like they read a shell. */
export const EXIT_COMMAND_NOT_FOUND = 127;
export const EXIT_CANNOT_EXECUTE = 126;

export type RunResult = Outcome | { failed: string; exitCode: number };

/** stdio inherited, nothing in the slots up to the lifeline's, then the lifeline (src/agent/lifeline.ts). */
function lifelineStdio(): StdioOptions {
  return ['inherit', 'inherit', 'inherit', ...Array<'ignore'>(LIFELINE_FD - 3).fill('ignore'), 'pipe'];
}

/** The child is a launcher (npm, npx, sh): the app is a process it starts. */
export interface LauncherOptions {
  /** How long pyro-run may outlive the launcher, waiting for the processes it started. */
  graceMs: number;
}

/**
 * Runs the launch with inherited stdio and relays signals while it lives. Resolves once the
 * child is gone (relay removed by then), or with `failed` when it could not be started.
 *
 * With `launcher`, signals go to the child's whole tree, and once the child has exited pyro-run
 * stays (relaying signals) until the processes that got them have ended too, for at most
 * `graceMs`: the app may still be flushing (see ChildTree). The outcome is the child's all the same.
 * With `lifeline`, the child gets the socket that tells the app when pyro-run was killed.
 */
export function run(launch: Launch, launcher: LauncherOptions | undefined, lifeline: boolean): Promise<RunResult> {
  return new Promise((resolve) => {
    const session = lifeline ? ownSession() : undefined;
    const child =
      session === undefined
        ? spawn(launch.file, launch.args, { stdio: 'inherit', env: launch.env })
        : spawn(launch.file, launch.args, { stdio: lifelineStdio(), env: { ...launch.env, [LIFELINE_ENV]: formatLifeline({ fd: LIFELINE_FD, session }) } });
    // Our end of the lifeline: never read, never written, and no reason to stay alive for.
    (child.stdio[LIFELINE_FD] as { unref?: () => void } | null | undefined)?.unref?.();
    const tree = launcher === undefined ? undefined : new ChildTree(child, launcher.graceMs);
    const stopRelay = relaySignals(child, tree);
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
      const outcome: Outcome = signal !== null ? { signal } : { code: code ?? 0 };
      if (tree === undefined) settle(outcome);
      else void tree.waitUntilGone().then(() => settle(outcome));
    });
  });
}
