/**
 * The vendor bundles load through V8's code cache (src/util/code-cache.ts): a file must load as
 * `require` loads it, whatever the cache holds, and the cache must follow the file's text. Real Node
 * children: an entry is written when a process has run, and taken by the next.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repoRoot, runNode } from '../support/child.js';
import { scratchDirs } from '../support/scratch.js';

const { fresh } = scratchDirs('pyro-run-code-cache-');
const CODE_CACHE = path.join(repoRoot, 'dist/src/util/code-cache.js');

/** A bundle-like file: it requires a file beside it and itself, and reports what a user of it relies on (a minified bundle has code on its first line, where the wrapper goes). */
const LIB = `'use strict'; const onFirstLine = () => new Error('first line').stack.split('\\n')[1].trim();
const dep = require('./dep.cjs');
exports.report = () => {
  const { stack } = new Error('where');
  return { dep: dep.value, self: require('./lib.cjs') === exports, dirname: __dirname, filename: __filename, at: stack.split('\\n')[1].trim(), onFirstLine: onFirstLine(), loaded: module.loaded };
};
`;

/** Loads lib.cjs (with the cache in <dir>/cache, or by require) and prints its report. */
const LOADER = `import { createRequire } from 'node:module';
import { requireWithCodeCache } from ${JSON.stringify(CODE_CACHE)};
const [file, cacheDir] = process.argv.slice(2);
const lib = cacheDir === 'require' ? createRequire(import.meta.url)(file) : requireWithCodeCache(file, cacheDir);
process.stdout.write(JSON.stringify(lib.report()));
`;

function project(): { dir: string; lib: string; cache: string } {
  const dir = fresh();
  fs.writeFileSync(path.join(dir, 'lib.cjs'), LIB);
  fs.writeFileSync(path.join(dir, 'dep.cjs'), 'exports.value = 42;\n');
  fs.writeFileSync(path.join(dir, 'loader.mjs'), LOADER);
  return { dir, lib: path.join(dir, 'lib.cjs'), cache: path.join(dir, 'cache') };
}

async function load(dir: string, lib: string, cacheDir: string): Promise<{ report: unknown; stderr: string }> {
  const child = runNode([path.join(dir, 'loader.mjs'), lib, cacheDir]);
  const exit = await child.exit();
  assert.equal(exit.code, 0, child.stderr);
  return { report: JSON.parse(child.stdout), stderr: child.stderr };
}

/** Each entry's name with what identifies its bytes on disk (a rewrite is a new file, renamed into place). */
const entries = (cache: string) =>
  fs.existsSync(cache) ? Object.fromEntries(fs.readdirSync(cache).map((name) => [name, fs.statSync(path.join(cache, name)).ino])) : {};

test('a file loads as require loads it: its dependencies, itself from require, __dirname, stack positions', async () => {
  const { dir, lib, cache } = project();
  const plain = await load(dir, lib, 'require');
  assert.deepEqual((await load(dir, lib, cache)).report, plain.report, 'first load, no cache yet');
  assert.deepEqual((await load(dir, lib, cache)).report, plain.report, 'from the cache');
});

test('the first process keeps an entry, the next takes it as it is, and a changed text gets a new entry in place of the old', async () => {
  const { dir, lib, cache } = project();
  await load(dir, lib, cache);
  const first = entries(cache);
  assert.equal(Object.keys(first).length, 1, JSON.stringify(first));
  assert.match(Object.keys(first)[0]!, new RegExp(`^lib\\.cjs\\.[0-9a-f]{16}\\.${process.versions.v8.replaceAll('.', '\\.')}\\.${process.arch}\\.bin$`));
  // Another Node's entry for the same file (its V8's name) is left alone.
  const otherNode = `${Object.keys(first)[0]!.split('.').slice(0, 3).join('.')}.0.0.0-other.${process.arch}.bin`;
  fs.writeFileSync(path.join(cache, otherNode), 'not ours');

  await load(dir, lib, cache);
  assert.deepEqual(entries(cache), { ...first, [otherNode]: entries(cache)[otherNode] }, 'V8 took the entry: nothing written again');

  fs.appendFileSync(lib, 'exports.more = true;\n');
  await load(dir, lib, cache);
  const after = entries(cache);
  assert.equal(Object.keys(after).length, 2, JSON.stringify(after));
  assert.ok(otherNode in after);
  assert.ok(!(Object.keys(first)[0]! in after), 'the entry of the earlier text is gone');
});

test('an entry V8 cannot use (corrupt) is ignored, the file loads, and the entry is written again', async () => {
  const { dir, lib, cache } = project();
  const plain = await load(dir, lib, 'require');
  await load(dir, lib, cache);
  const [name] = Object.keys(entries(cache));
  assert.ok(name);
  fs.writeFileSync(path.join(cache, name), Buffer.alloc(4096, 7));
  assert.deepEqual((await load(dir, lib, cache)).report, plain.report);
  assert.notDeepEqual(fs.readFileSync(path.join(cache, name)), Buffer.alloc(4096, 7));
});

test('a cache folder that cannot be made: the file loads as without it, nothing printed', async () => {
  const { dir, lib } = project();
  const plain = await load(dir, lib, 'require');
  // A folder under a regular file: ENOTDIR for everyone, root included.
  const blocked = path.join(dir, 'dep.cjs', 'cache');
  const loaded = await load(dir, lib, blocked);
  assert.deepEqual(loaded.report, plain.report);
  assert.equal(loaded.stderr, '');
});

test("'after-load': the entry is written as the load returns and holds the code run by then, not what runs later", async () => {
  const dir = fresh();
  const lib = path.join(dir, 'lib.cjs');
  // `later` is compiled only when called, after the load: a large body, so that its code weighs in an entry.
  fs.writeFileSync(lib, `exports.later = function () { let x = 0; ${'x += Math.sqrt(x + 1) * 3;'.repeat(400)} return x; };\n`);
  fs.writeFileSync(
    path.join(dir, 'loader.mjs'),
    `import fs from 'node:fs';
import { requireWithCodeCache } from ${JSON.stringify(CODE_CACHE)};
const [file, cacheDir, when] = process.argv.slice(2);
const lib = requireWithCodeCache(file, cacheDir, when);
const atLoad = fs.existsSync(cacheDir) ? fs.readdirSync(cacheDir) : [];
lib.later();
process.stdout.write(JSON.stringify(atLoad));
`,
  );
  const run = async (when: string) => {
    const cache = path.join(dir, when);
    const child = runNode([path.join(dir, 'loader.mjs'), lib, cache, when]);
    assert.equal((await child.exit()).code, 0, child.stderr);
    const [entry, ...more] = fs.readdirSync(cache);
    assert.ok(entry !== undefined && more.length === 0, `${when}: one entry`);
    return { atLoad: JSON.parse(child.stdout) as string[], size: fs.statSync(path.join(cache, entry)).size };
  };
  const afterLoad = await run('after-load');
  const afterStart = await run('after-start');
  assert.equal(afterLoad.atLoad.length, 1, 'written before the load returned');
  assert.deepEqual(afterStart.atLoad, [], 'the default waits for the start (here: the exit)');
  assert.ok(afterLoad.size < afterStart.size, `after-load ${afterLoad.size} B, after-start ${afterStart.size} B`);
});
