import { nodeFs } from '../../util/builtins.js';
import { RUN_STALE_MS } from '../../recording.js';

/** What a run's run.json says about its process, and when the file was last written. */
export interface LivenessFacts {
  complete: boolean;
  writtenAtMs: number;
  pid: number | undefined;
  pidNamespace: string | undefined;
}

/** Where the question is asked: now, this process's PID namespace, and a way to ask the kernel about a pid. */
export interface Vantage {
  nowMs: number;
  pidNamespace: string | null;
  pidAlive: (pid: number) => boolean;
}

/**
 * Whether a run is still being recorded, so must not be deleted. A pid alone cannot tell: pids
 * are reused, every container's app is PID 1, and a run folder on a shared volume may belong to
 * another container, where our pid means nothing. So:
 * - `complete` in run.json: finished (the recorder wrote its last manifest);
 * - run.json not written for RUN_STALE_MS: finished — a live recorder writes or touches it every
 *   RUN_HEARTBEAT_MS, so its process is gone (SIGKILL, OOM kill, power loss);
 * - its process is in our PID namespace (same boot, same namespace) and its pid is not alive:
 *   finished, without waiting for the heartbeat to go stale. A pid that is alive proves nothing
 *   (it may be reused), so it never makes a run count as running by itself;
 * - otherwise running.
 */
export function isRunning(run: LivenessFacts, here: Vantage): boolean {
  if (run.complete) return false;
  if (here.nowMs - run.writtenAtMs > RUN_STALE_MS) return false;
  const sameNamespace = here.pidNamespace !== null && run.pidNamespace === here.pidNamespace;
  if (sameNamespace && run.pid !== undefined && !here.pidAlive(run.pid)) return false;
  return true;
}

let namespace: string | null | undefined;

/**
 * `<boot id>/<pid namespace>` of this process on Linux, where pids mean the same to every process
 * with the same value; null elsewhere (no way to know, so pids are not compared).
 */
export function pidNamespace(): string | null {
  if (namespace !== undefined) return namespace;
  namespace = null;
  if (process.platform === 'linux') {
    try {
      const bootId = nodeFs().readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      namespace = `${bootId}/${nodeFs().readlinkSync('/proc/self/ns/pid')}`;
    } catch {
      // A sandbox without /proc: pids are not compared, the heartbeat still tells.
    }
  }
  return namespace;
}

/** Whether a process with this pid exists (in our PID namespace); EPERM means it does, someone else's. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
