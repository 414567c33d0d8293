// node-postgres's suite as TAP, for bench/suite-diff.mjs: run in packages/pg,
// `node bench/suite-tap/node-postgres.mjs test/unit test/integration`. Every `*-tests.js` under the
// folders runs as its Makefile runs it, `node <file>`, one at a time; each test it prints and each
// file's exit are one TAP entry (bench/lib/tap.mjs). The connection comes from the PG* variables.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { pgFileResults, toTap } from '../lib/tap.mjs';

/** A file that hangs is a failure, not a stuck comparison. */
const FILE_TIMEOUT_MS = 120_000;

const testFiles = (dir) =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('-tests.js'))
    .map((entry) => path.join(entry.parentPath, entry.name));

const results = [];
for (const file of process.argv.slice(2).flatMap(testFiles).sort()) {
  const run = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: FILE_TIMEOUT_MS });
  results.push(...pgFileResults(file, run.stdout ?? '', run.status ?? run.signal));
  if (run.status !== 0)
    process.stderr.write(`${file}: exit ${run.status ?? run.signal}\n${(run.stdout ?? '').slice(-2000)}${(run.stderr ?? '').slice(-2000)}\n`);
}
console.log(toTap(results));
