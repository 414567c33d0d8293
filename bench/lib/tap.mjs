// Test results out of TAP, as mocha (`--reporter tap`) and node's test runner (`--test-reporter=tap`)
// print it: one entry per test, named by its path of subtests, with its outcome. Pure: text in,
// results out.

const RESULT = /^( *)(not ok|ok) \d+(?: -)? ?(.*?)(?: # (SKIP|TODO)\b.*)?$/i;
const SUBTEST = /^( *)# Subtest: (.*)$/;
/** node's runner indents a subtest's lines by four spaces per level. */
const INDENT = 4;

/**
 * The results in `text`, in order: `{ name, outcome }`, outcome `pass`, `fail`, `skip` or `todo`.
 * A name is the test's path (`suite › test`), with ` #2`, ` #3` … after repeats so every entry
 * stays apart. Entries that have subtests (node's suites and files) are left out: their outcome
 * is their children's.
 */
export function parseTap(text) {
  const open = [];
  const results = [];
  const seen = new Map();
  let lastDepth = -1;
  for (const line of text.split('\n')) {
    const subtest = SUBTEST.exec(line);
    if (subtest) {
      const depth = Math.floor(subtest[1].length / INDENT);
      open.length = depth;
      open[depth] = subtest[2].trim();
      continue;
    }
    const result = RESULT.exec(line);
    if (!result) continue;
    const depth = Math.floor(result[1].length / INDENT);
    // A result one level up from the last one closes a parent: its children were reported already.
    const parent = lastDepth > depth;
    lastDepth = depth;
    if (parent) continue;
    const title = unescape(result[3].trim());
    const base = [...open.slice(0, depth), title].join(' › ');
    const count = (seen.get(base) ?? 0) + 1;
    seen.set(base, count);
    const directive = result[4]?.toUpperCase();
    const outcome = directive === 'SKIP' ? 'skip' : directive === 'TODO' ? 'todo' : result[2].toLowerCase() === 'ok' ? 'pass' : 'fail';
    results.push({ name: count === 1 ? base : `${base} #${count}`, outcome });
  }
  return results;
}

/** TAP escapes `#` and `\` in names. */
function unescape(title) {
  return title.replace(/\\([#\\])/g, '$1');
}

/** How two runs' results differ: per test, those whose outcome changed or that ran in one run only. */
export function compareRuns(without, withAgent) {
  const before = new Map(without.map((r) => [r.name, r.outcome]));
  const after = new Map(withAgent.map((r) => [r.name, r.outcome]));
  const changed = [];
  for (const [name, outcome] of before) {
    const other = after.get(name);
    if (other === undefined) changed.push({ name, without: outcome, with: 'not run' });
    else if (other !== outcome) changed.push({ name, without: outcome, with: other });
  }
  for (const [name, outcome] of after) if (!before.has(name)) changed.push({ name, without: 'not run', with: outcome });
  return changed;
}

/** Counts per outcome. */
export function tally(results) {
  const counts = { tests: results.length, pass: 0, fail: 0, skip: 0, todo: 0 };
  for (const { outcome } of results) counts[outcome]++;
  return counts;
}
