// Goals are information: a verdict line per goal in full mode, never an exit code.

/** A goal's outcome: `pass` is undefined when it could not be judged (missing data). */
export function goal(name, pass, detail) {
  return { name, pass: pass === undefined || pass === null ? undefined : Boolean(pass), detail };
}

export function verdictLine(g) {
  const word = g.pass === undefined ? 'N/A ' : g.pass ? 'PASS' : 'FAIL';
  return `${word}  ${g.name} — ${g.detail}`;
}
