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
