import { readdirSync, readFileSync } from 'node:fs';

/**
 * The processes below `pid`, deepest last, from /proc (Linux). Elsewhere, or if /proc cannot be
 * read, none: callers then reach the direct child only. The children of a process for which
 * `leaveChildren` is true are left out (their own descendants are not).
 */
export function descendantsOf(pid: number, leaveChildren: (parent: number) => boolean = () => false): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = parentOf(entry);
    if (parent === undefined) continue;
    const list = children.get(parent) ?? [];
    list.push(Number(entry));
    children.set(parent, list);
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    const below = children.get(parent) ?? [];
    if (!leaveChildren(parent)) out.push(...below);
    queue.push(...below);
  }
  return out;
}

/** argv[1] of a process, from /proc/<pid>/cmdline: the script, for a Node process started as `node script`. */
export function scriptOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[1];
  } catch {
    return undefined;
  }
}

/** The parent pid from /proc/<pid>/stat; the command name (field 2) may hold spaces and parentheses. */
function parentOf(pid: string): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[1]);
  } catch {
    return undefined;
  }
}
