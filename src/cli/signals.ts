/**
 * pyro-run stands in for the app: signals sent to it go to the app, and it ends the way the app
 * ended (same exit code, or death by the same signal), so shells, supervisors and CI see the app.
 */
import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import type { ChildTree } from './child-tree.js';

/**
 * What a terminal, a supervisor or a deploy tool sends to stop or nudge a process. SIGUSR1 is
 * missing on purpose: Node reserves it in pyro-run itself to start the inspector.
 */
export const RELAYED_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2'];

/**
 * If the self-kill does not end us (the signal was ignored when we started, as `nohup` does
 * with SIGHUP), exit with the shell's convention for death by signal instead.
 */
const SELF_KILL_GRACE_MS = 1_000;
const SIGNAL_EXIT_BASE = 128;

/**
 * Forwards RELAYED_SIGNALS to the child. Having listeners also keeps pyro-run alive when the
 * signal arrives, so it can report how the app ended. Returns the function that removes them.
 *
 * With the child's `tree` (launchers such as `npm start`), the signal also goes to the processes
 * below the child, as a terminal's Ctrl-C reaches its whole foreground group: npm runs scripts
 * through `sh -c`, and Debian's sh does not pass SIGTERM on, so `docker stop` would otherwise end
 * npm and leave the app running without its final flush. Once the child has exited, signals go
 * to those of its processes that still run (see ChildTree.signalTargets).
 */
export function relaySignals(child: ChildProcess, tree?: ChildTree): () => void {
  const listeners = RELAYED_SIGNALS.map((signal) => {
    const listener = () => {
      const targets = tree?.signalTargets(signal) ?? [];
      // Signals that race the child's exit have nowhere to go; kill() then reports false or ESRCH.
      for (const send of [() => child.kill(signal), ...targets.map((pid) => () => process.kill(pid, signal))]) {
        try {
          send();
        } catch {
          // That process is gone already.
        }
      }
    };
    process.on(signal, listener);
    return [signal, listener] as const;
  });
  return () => {
    for (const [signal, listener] of listeners) process.removeListener(signal, listener);
  };
}

export type Outcome = { code: number; signal?: undefined } | { signal: NodeJS.Signals; code?: undefined };

/** 128 + the signal's number, what a shell reports for a process killed by it. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return SIGNAL_EXIT_BASE + (constants.signals[signal] ?? 0);
}

/** Ends pyro-run like the child ended. Call after relaySignals' remover, so the signal is not caught. */
export function mirrorExit(outcome: Outcome): void {
  if (outcome.signal === undefined) {
    process.exit(outcome.code);
  }
  const signal = outcome.signal;
  // Not unref'd: with nothing else alive, the process could exit 0 before the signal lands.
  setTimeout(() => process.exit(signalExitCode(signal)), SELF_KILL_GRACE_MS);
  process.kill(process.pid, signal);
}
