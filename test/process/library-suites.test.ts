/**
 * A library's own suite, with the agent as without it, in every CI run: a new version of a bundled
 * instrumentation that changes how the library behaves fails the build here, not in an app.
 * CI reaches the npm registry only, so these are the libraries whose npm package ships its tests:
 * lru-memoizer (whose instrumentation replaced the memoized function with one that had lost its
 * methods, until the fix in build/instrumentation-patches.ts). The rest of the matrix is run by
 * hand (docs/compatibility.md, with `bench/suite-diff.mjs`).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../support/child.js';
import { NPM_TIMEOUT_MS, npm } from '../support/npm.js';
import { scratchDirs } from '../support/scratch.js';

const { fresh } = scratchDirs('pyro-run-library-suites-');

/** The package's tarball unpacked as `<host>/node_modules/<name>` (where the instrumentations know it), its dev dependencies installed. */
function unpacked(spec: string, name: string): string {
  const host = fresh();
  const dir = path.join(host, 'node_modules', name);
  mkdirSync(dir, { recursive: true });
  const tarball = npm(['pack', spec, '--pack-destination', host, '--silent'], host).trim().split('\n').at(-1)!;
  execFileSync('tar', ['xzf', path.join(host, tarball), '-C', dir, '--strip-components=1']);
  npm(['install', '--ignore-scripts', '--no-package-lock'], dir);
  return dir;
}

/** bench/suite-diff.mjs's report of the suite run without and with the agent. */
function suiteDiff(dir: string, command: string): string {
  return execFileSync(process.execPath, [path.join(repoRoot, 'bench/suite-diff.mjs'), dir, '--', command], {
    encoding: 'utf8',
    timeout: 300_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

test("lru-memoizer 3.0.0's own suite, from its npm package, gives the same outcome test by test with the agent", { timeout: NPM_TIMEOUT_MS + 300_000 }, () => {
  const report = suiteDiff(unpacked('lru-memoizer@3.0.0', 'lru-memoizer'), 'npx mocha --reporter tap');
  const row = /\| with the agent +\| (\d+) +\| (\d+) +\| (\d+) +\| (\d+) /.exec(report);
  assert.ok(row, report);
  assert.ok(Number(row[2]) >= 40, `the suite ran: ${row[2]} tests\n${report}`);
  assert.match(report, /\nidentical: every test has the same outcome with the agent as without it\n/, report);
});
