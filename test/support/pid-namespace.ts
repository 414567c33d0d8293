/**
 * Running a command as PID 1 of a new PID namespace (`unshare --pid --fork --mount-proc`), the
 * way a container engine starts an ENTRYPOINT, without a container engine.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export const UNSHARE_ARGS = ['--pid', '--fork', '--mount-proc', '--'];

/** Why PID namespaces cannot be made here (not root, no unshare, a sandbox forbids it), or undefined when they can. */
export function pidNamespaceUnavailable(): string | undefined {
  const probe = spawnSync('unshare', [...UNSHARE_ARGS, 'true'], { encoding: 'utf8', timeout: 10_000 });
  if (probe.error) return `unshare cannot run: ${probe.error.message}`;
  if (probe.status !== 0) return `unshare --pid --fork --mount-proc is not permitted here: ${probe.stderr.trim() || `exit ${probe.status}`}`;
  return undefined;
}

/**
 * The process `unshare --fork` started (PID 1 inside the namespace) as our namespace sees it,
 * checked through its NSpid line: its pid here, then its pid inside, which must be 1.
 */
export function pid1Of(unsharePid: number): number {
  const children = readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, 'utf8').trim().split(/\s+/).map(Number);
  if (children.length !== 1) throw new Error(`unshare ${unsharePid} has children ${JSON.stringify(children)}, expected one`);
  const pid = children[0]!;
  const nspid = readFileSync(`/proc/${pid}/status`, 'utf8')
    .match(/^NSpid:\s+(.*)$/m)?.[1]
    ?.split(/\s+/)
    .map(Number);
  if (nspid?.at(-1) !== 1) throw new Error(`process ${pid} is not PID 1 of its namespace (NSpid ${JSON.stringify(nspid)})`);
  return pid;
}
