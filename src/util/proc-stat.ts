/**
 * /proc/<pid>/stat (Linux, proc(5)), read by the CLI's process tree and by the lifeline. The
 * command name (field 2) may hold spaces and parentheses, so the fields are split after its last
 * `)`: index 0 is field 3 (state), 1 the parent, 3 the session, 19 the start time.
 */
export function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}
