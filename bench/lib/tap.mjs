// Test results out of TAP, as mocha (`--reporter tap`) and node's test runner (`--test-reporter=tap`)
// print it: one entry per test, named by its path of subtests, with its outcome. Pure: text in,
// results out.

// A directive after the name: SKIP and TODO, and node-tap's `# time=…` (which differs run to run).
const RESULT = /^( *)(not ok|ok) \d+(?: -)? ?(.*?)(?: # (SKIP|TODO)\b.*| # time=\S+)?$/i;
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
    const title = unescapeTitle(result[3].trim());
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
function unescapeTitle(title) {
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

/** One TAP result line; `#` and `\` in the name escaped as TAP wants them. */
export function tapLine(number, name, outcome) {
  const escaped = name.replace(/[#\\]/g, '\\$&');
  return outcome === 'skip' ? `ok ${number} - ${escaped} # SKIP` : `${outcome === 'pass' ? 'ok' : 'not ok'} ${number} - ${escaped}`;
}

// node-postgres's own runner (packages/pg/test/suite.js) writes each test as `  <name> ` followed by
// `✔`, `? - SKIPPED` or `FAILED!`, and ends the file's process at the first failure.
const PG_TEST = /^ {2}(.*) (✔|\? - SKIPPED|FAILED!)$/;
const PG_OUTCOME = { '✔': 'pass', '? - SKIPPED': 'skip', 'FAILED!': 'fail' };

/**
 * The results of one node-postgres test file run as its Makefile runs it (`node <file>`): each test
 * it printed, named `<file> › <test>`, then the file itself, passing only when it exited with 0.
 */
export function pgFileResults(file, stdout, exitCode) {
  const results = [];
  for (const line of stdout.split('\n')) {
    const match = PG_TEST.exec(line);
    if (match) results.push({ name: `${file} › ${match[1]}`, outcome: PG_OUTCOME[match[2]] });
  }
  results.push({ name: `${file} (exit ${exitCode})`, outcome: exitCode === 0 ? 'pass' : 'fail' });
  return results;
}

/** poku's compact reporter: ` PASS  <file>`, ` FAIL  <file>` or ` SKIP  <file>` per test file, in colour. */
const POKU_FILE = /^\s*(PASS|FAIL|SKIP)\s+(\S+)\s*$/;
const POKU_OUTCOME = { PASS: 'pass', FAIL: 'fail', SKIP: 'skip' };

/** The test files' results out of poku's compact report. */
export function pokuResults(text) {
  const results = [];
  for (const line of text.replace(/\x1b\[[0-9;]*m/g, '').split('\n')) {
    const match = POKU_FILE.exec(line);
    if (match) results.push({ name: match[2], outcome: POKU_OUTCOME[match[1]] });
  }
  return results;
}

/** `results` as TAP, numbered in order. */
export const toTap = (results) => [...results.map((r, i) => tapLine(i + 1, r.name, r.outcome)), `1..${results.length}`].join('\n');
