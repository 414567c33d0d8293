import { readdirSync, readFileSync } from 'node:fs';

/**
 * The processes below `pid`, deepest last, from /proc (Linux). Elsewhere, or if /proc cannot be
 * read, none: callers then reach the direct child only.
 */
export function descendantsOf(pid: number): number[] {
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
  const queue = [...(children.get(pid) ?? [])];
  while (queue.length > 0) {
    const next = queue.shift()!;
    out.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return out;
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
