/**
 * The lifeline between the pyro-run CLI and the app it started: a socket the CLI opens to its
 * child and never writes to. Killed with SIGKILL (`timeout -k`, a CI runner cancelling a job),
 * the CLI cannot relay a signal, but the kernel closes its end: the app reads end-of-file and
 * stops as on SIGTERM (flush, exit) instead of serving on, orphaned, holding its port.
 *
 * The CLI hands the socket on as a file descriptor with `PYRO_RUN_LIFELINE=<fd>:<session id>`.
 * Every Node process below the CLI inherits both (launchers such as npm pass them on); the first
 * process that runs the agent takes the variable out of its environment, so the app's own
 * children are left to the app, as a relayed SIGTERM would be. A process in another session
 * than the CLI's has been daemonized (`pm2 start`: the daemon calls setsid): it was meant to
 * outlive the command that started it and does not watch. Linux only (the session comes from
 * /proc); `--orphaned-app keep` (PYRO_RUN_ORPHANED_APP) opens no lifeline at all.
 *
 * Session 0 is a real answer, not a failure: in a container whose PID namespace does not hold
 * the session's leader (`docker exec`, CI runners), /proc reports the session as 0 (proc(5):
 * the id "in the PID namespace of the reader", 0 when the leader is not in it). A daemon's
 * `setsid()` inside the namespace gives it a session the namespace sees, so 0 ≠ daemon holds.
 */
import type { Env } from '../config/index.js';
import { nodeFs } from '../util/builtins.js';
import { statFields } from '../util/proc-stat.js';

export const LIFELINE_ENV = 'PYRO_RUN_LIFELINE';
/** Where the child finds the socket: the first descriptor after stdio and Node's usual IPC slot. */
export const LIFELINE_FD = 4;

export interface Lifeline {
  fd: number;
  /** Session id of the CLI: watchers in another session are daemons. */
  session: number;
}

export function formatLifeline(lifeline: Lifeline): string {
  return `${lifeline.fd}:${lifeline.session}`;
}

/** `<fd>:<session>` (session 0 included: see above); undefined for anything else. */
export function parseLifeline(value: string | undefined): Lifeline | undefined {
  const match = /^(\d+):(\d+)$/.exec(value ?? '');
  if (!match) return undefined;
  const fd = Number(match[1]);
  const session = Number(match[2]);
  return fd > 2 ? { fd, session } : undefined;
}

/** The session id (field 6) of /proc/<pid>/stat text; 0 when its leader is outside our PID namespace. */
export function sessionOfStat(stat: string): number | undefined {
  const field = statFields(stat)[3] ?? '';
  return /^\d+$/.test(field) ? Number(field) : undefined;
}

/** This process's session id, or undefined where /proc cannot tell (not Linux). */
export function ownSession(): number | undefined {
  try {
    return sessionOfStat(nodeFs().readFileSync('/proc/self/stat', 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Watches the lifeline the CLI handed to this process, if any; calls `onCliGone` once if the CLI
 * dies first. `keepInEnv`: leave the variable for the processes this one starts (launchers).
 * Returns whether it watches. Never throws, and never holds the process open.
 */
export function watchLifeline(env: NodeJS.ProcessEnv, onCliGone: () => void, keepInEnv: boolean): boolean {
  const lifeline = parseLifeline(env[LIFELINE_ENV]);
  if (!keepInEnv) delete env[LIFELINE_ENV];
  if (lifeline === undefined || !isOurs(lifeline, env)) return false;
  try {
    const { Socket } = process.getBuiltinModule('node:net');
    const socket = new Socket({ fd: lifeline.fd, readable: true, writable: false });
    socket.unref();
    let gone = false;
    const end = () => {
      if (gone) return;
      gone = true;
      socket.destroy();
      onCliGone();
    };
    // The CLI writes nothing: any end of the stream, clean or not, is the CLI gone.
    socket.on('end', end).on('close', end).on('error', end).resume();
    return true;
  } catch {
    // Not a socket we can read after all: no lifeline, as before the CLI had one.
    return false;
  }
}

/** The descriptor is the CLI's socket, not something a launcher in between put there. */
function isOurs(lifeline: Lifeline, env: Env): boolean {
  // A launcher that forks with an IPC channel (tsx's CLI) may have given the slot to it.
  if (env.NODE_CHANNEL_FD === String(lifeline.fd)) return false;
  if (ownSession() !== lifeline.session) return false;
  try {
    return nodeFs().fstatSync(lifeline.fd).isSocket();
  } catch {
    return false;
  }
}
