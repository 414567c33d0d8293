import { readdirSync, readFileSync } from 'node:fs';
import { statFields } from '../util/proc-stat.js';

/**
 * A process as /proc showed it. The pid alone does not name it for long: once the process has
 * exited and been reaped, the kernel may give its pid to an unrelated process; pid and start time
 * together do.
 */
export interface ProcessEntry {
  pid: number;
  parent: number;
  /** Field 22 of /proc/<pid>/stat: clock ticks from boot to the process's start. */
  startTime: string;
}

/** Stat states of a process that has exited: a zombie waits for its parent to reap it, X is being reaped. */
const EXITED_STATES: ReadonlySet<string> = new Set(['Z', 'X']);

/**
 * The processes below `pid`, each before its children, from /proc (Linux). Elsewhere, or if
 * /proc cannot be read, none: callers then reach the direct child only.
 */
export function processesBelow(pid: number): ProcessEntry[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const children = new Map<number, ProcessEntry[]>();
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const stat = statOf(Number(name));
    if (stat === undefined) continue;
    const list = children.get(stat.parent) ?? [];
    list.push({ pid: Number(name), parent: stat.parent, startTime: stat.startTime });
    children.set(stat.parent, list);
  }
  const out: ProcessEntry[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const below = children.get(queue.shift()!) ?? [];
    out.push(...below);
    queue.push(...below.map((entry) => entry.pid));
  }
  return out;
}

/** Whether the process seen as `entry` still runs: its pid has the same start time and is no zombie. */
export function isRunning(entry: ProcessEntry): boolean {
  const stat = statOf(entry.pid);
  return stat !== undefined && stat.startTime === entry.startTime && !EXITED_STATES.has(stat.state);
}

/** argv[1] of a process, from /proc/<pid>/cmdline: the script, for a Node process started as `node script`. */
export function scriptOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[1];
  } catch {
    return undefined;
  }
}

/** State, parent and start time (field 22) from /proc/<pid>/stat. */
function statOf(pid: number): { state: string; parent: number; startTime: string } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = statFields(stat);
  const [state, parent, startTime] = [fields[0], fields[1], fields[19]];
  if (state === undefined || parent === undefined || startTime === undefined) return undefined;
  return { state, parent: Number(parent), startTime };
}
