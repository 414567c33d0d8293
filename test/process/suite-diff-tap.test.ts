/**
 * bench/suite-diff.mjs reads a library's test results from TAP, as mocha and node's test runner
 * print it, and compares the runs without and with the agent test by test.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '../support/child.js';

interface Result {
  name: string;
  outcome: string;
}
interface Tap {
  parseTap(text: string): Result[];
  compareRuns(without: Result[], withAgent: Result[]): { name: string; without: string; with: string }[];
  tally(results: Result[]): Record<string, number>;
  pgFileResults(file: string, stdout: string, exitCode: number | string): Result[];
  pokuResults(text: string): Result[];
  toTap(results: Result[]): string;
}
const tap = (await import(pathToFileURL(path.join(repoRoot, 'bench/lib/tap.mjs')).href)) as Tap;

test("mocha's TAP: flat, the suite's title before the test's, failures with their YAML", () => {
  const text = [
    '1..4',
    'ok 1 Router should support .use of other routers',
    'not ok 2 Router should handle blank URL',
    '  ---',
    '  message: ok 3 is no result here',
    '  ...',
    'ok 3 res .format() should skip # SKIP',
    'ok 4 Router should support .use of other routers',
    '# tests 4',
  ].join('\n');
  assert.deepEqual(tap.parseTap(text), [
    { name: 'Router should support .use of other routers', outcome: 'pass' },
    { name: 'Router should handle blank URL', outcome: 'fail' },
    { name: 'res .format() should skip', outcome: 'skip' },
    { name: 'Router should support .use of other routers #2', outcome: 'pass' },
  ]);
});

test("node-tap's result lines: the time it appends to a test without assertions is no part of its name", () => {
  const text = ['ok 1 - acquire with no resources # time=20.863ms', 'ok 2 - drain # time=1.2s', 'not ok 3 - destroy', '1..3'].join('\n');
  assert.deepEqual(tap.parseTap(text), [
    { name: 'acquire with no resources', outcome: 'pass' },
    { name: 'drain', outcome: 'pass' },
    { name: 'destroy', outcome: 'fail' },
  ]);
});

test("node's TAP: subtests named by their path, suites left out (their outcome is their children's)", () => {
  const text = [
    'TAP version 13',
    '# Subtest: app.use(fn)',
    '    # Subtest: should compose middleware',
    '    ok 1 - should compose middleware',
    '    # Subtest: nested',
    '        # Subtest: deep \\# one',
    '        not ok 1 - deep \\# one',
    '        1..1',
    '    not ok 2 - nested',
    '    # Subtest: todo one',
    '    ok 3 - todo one # TODO later',
    '    1..3',
    'not ok 1 - app.use(fn)',
    '# Subtest: top',
    'ok 2 - top',
    '1..2',
  ].join('\n');
  assert.deepEqual(tap.parseTap(text), [
    { name: 'app.use(fn) › should compose middleware', outcome: 'pass' },
    { name: 'app.use(fn) › nested › deep # one', outcome: 'fail' },
    { name: 'app.use(fn) › todo one', outcome: 'todo' },
    { name: 'top', outcome: 'pass' },
  ]);
});

test('two runs compared: changed outcomes and tests that ran in one run only; counts per outcome', () => {
  const without = [
    { name: 'a', outcome: 'pass' },
    { name: 'b', outcome: 'pass' },
    { name: 'c', outcome: 'fail' },
  ];
  const withAgent = [
    { name: 'a', outcome: 'pass' },
    { name: 'b', outcome: 'fail' },
    { name: 'd', outcome: 'pass' },
  ];
  assert.deepEqual(tap.compareRuns(without, withAgent), [
    { name: 'b', without: 'pass', with: 'fail' },
    { name: 'c', without: 'fail', with: 'not run' },
    { name: 'd', without: 'not run', with: 'pass' },
  ]);
  assert.deepEqual(tap.compareRuns(without, without), []);
  assert.deepEqual(tap.tally(withAgent), { tests: 3, pass: 2, fail: 1, skip: 0, todo: 0 });
});

test("node-postgres's runner: each printed test and the file's exit are results; a failure ends the file", () => {
  const stdout = ['', '  simple query ✔', '  copy to \u2026 ? - SKIPPED', '  can connect with ssl FAILED!', '', 'Error: no SSL', '  at x (a.js:1:1)'].join(
    '\n',
  );
  assert.deepEqual(tap.pgFileResults('test/integration/client/ssl-tests.js', stdout, 255), [
    { name: 'test/integration/client/ssl-tests.js › simple query', outcome: 'pass' },
    { name: 'test/integration/client/ssl-tests.js › copy to \u2026', outcome: 'skip' },
    { name: 'test/integration/client/ssl-tests.js › can connect with ssl', outcome: 'fail' },
    { name: 'test/integration/client/ssl-tests.js (exit 255)', outcome: 'fail' },
  ]);
  assert.deepEqual(tap.pgFileResults('a-tests.js', '  one ✔\n', 0), [
    { name: 'a-tests.js › one', outcome: 'pass' },
    { name: 'a-tests.js (exit 0)', outcome: 'pass' },
  ]);
});

test("poku's compact report: one result per file, its colours and summary lines ignored", () => {
  const text = [
    '\x1b[2m\x1b[1m PASS \x1b[0m test/unit/test-packet.test.mts',
    ' FAIL  test/integration/test-server-close.test.mts',
    ' SKIP  test/global/test-#82.test.mts',
    '      \u2718 Assertion Error',
    '\x1b[42m\x1b[1m PASS \u203a 221 \x1b[0m \x1b[101m\x1b[1m FAIL \u203a 6 \x1b[0m',
  ].join('\n');
  const results = tap.pokuResults(text);
  assert.deepEqual(results, [
    { name: 'test/unit/test-packet.test.mts', outcome: 'pass' },
    { name: 'test/integration/test-server-close.test.mts', outcome: 'fail' },
    { name: 'test/global/test-#82.test.mts', outcome: 'skip' },
  ]);
  assert.deepEqual(tap.parseTap(tap.toTap(results)), results, 'the TAP written reads back as the same results, # in a name included');
});
