/**
 * The preloads are esbuild bundles under dist/preload/ (build/preload-bundle.ts), where package.json's
 * `./register` export points: each an ES module Node loads, which runs the bundle's body (CommonJS)
 * with V8's code cache. Before the app's first line, a process with the agent loads the main
 * thread's preload, its body and the vendored OpenTelemetry bundles, no module of dist/src/ one by
 * one; and each bundled module still resolves paths from its own compiled file.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { asciiComments } from '../../build/ascii-output.js';
import { keepOwnUrl } from '../../build/own-url.js';
import { preloadBody } from '../../src/preloads.js';
import { entryName } from '../../src/util/code-cache.js';
import { VENDOR_UNDICI_FILE } from '../../src/vendor.js';
import { fixture, registerPath, repoRoot, runNode, workerPreloadPath } from '../support/child.js';
import { scratchDirs } from '../support/scratch.js';

const { fresh } = scratchDirs('pyro-run-preload-bundle-');
/** The body a preload (its path) runs. */
const bodyOf = (preload: string): string => fileURLToPath(preloadBody(pathToFileURL(preload)));

test("a bundled module's import.meta.url is its own compiled file's, resolved from the bundle's", () => {
  const cases: [string, string, string][] = [
    [
      'const require = createRequire(import.meta.url);',
      '../src/vendor.js',
      'const require = createRequire(new URL("../src/vendor.js", import.meta.url).href);',
    ],
    [
      "new URL('./flush-worker.js', import.meta.url)",
      '..\\src\\export\\final-flush.js',
      'new URL(\'./flush-worker.js\', new URL("../src/export/final-flush.js", import.meta.url).href)',
    ],
    [
      'a(import.meta.url); b(import.meta.url);',
      'register.js',
      'a(new URL("./register.js", import.meta.url).href); b(new URL("./register.js", import.meta.url).href);',
    ],
    ['no url here', 'src/x.js', 'no url here'],
  ];
  for (const [text, file, expected] of cases) assert.equal(keepOwnUrl(text, file), expected, file);
});

test("package.json's `./register` is the main thread's preload bundle, the file the CLI preloads, for import and require alike", () => {
  const manifest = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { exports: Record<string, Record<string, string>> };
  const register = manifest.exports['./register']!;
  for (const condition of ['import', 'require', 'default']) assert.equal(path.join(repoRoot, register[condition]!), registerPath, condition);
  assert.ok(existsSync(path.join(repoRoot, register.types!)), register.types);
});

test("every module in each preload bundle (the main thread's, a worker's) resolves its own compiled file from the bundle's folder", () => {
  for (const preload of [registerPath, workerPreloadPath]) {
    // The ES module Node loads (its code-cache loader) and the body it runs, where `__bundleUrl` is the body's own URL.
    const body = bodyOf(preload);
    for (const bundle of [preload, body]) {
      const own = [...readFileSync(bundle, 'utf8').matchAll(/new URL\("([^"]+)", (?:import\.meta\.url|__bundleUrl)\)/g)].map((match) => match[1]!);
      assert.ok(own.length > 0, `${bundle} keeps its modules' URLs`);
      for (const file of new Set(own)) {
        const resolved = fileURLToPath(new URL(file, pathToFileURL(bundle)));
        if (bundle === preload && resolved === body) continue;
        assert.ok(existsSync(resolved), `${path.relative(repoRoot, bundle)}: ${file} is ${resolved}, which does not exist`);
        assert.ok(resolved.startsWith(path.join(repoRoot, 'dist', 'src') + path.sep), `${file}: a file tsc writes`);
      }
    }
  }
});

test("a bundle's characters outside ASCII are written as escapes, which read the same in its comments", () => {
  const cases: [string, string][] = [
    ['/** a \u2014 b */ x = 1;', '/** a \\u2014 b */ x = 1;'],
    ['/*! J\u00e4rting */', '/*! J\\u00e4rting */'],
    ['// \u{1f600}', '// \\ud83d\\ude00'],
    ['plain', 'plain'],
  ];
  for (const [text, expected] of cases) assert.equal(asciiComments(text), expected, text);
});

test("every bundle of ours V8 compiles in the app is ASCII (one byte a character in V8's heap), and each preload's body is strict code", () => {
  const dist = path.join(repoRoot, 'dist');
  const bodies = [registerPath, workerPreloadPath].map(bodyOf);
  const vendored = readdirSync(path.join(dist, 'vendor')).map((file) => path.join(dist, 'vendor', file));
  assert.ok(
    vendored.some((file) => file.endsWith(`${path.sep}${VENDOR_UNDICI_FILE}`)),
    'the undici bundle is built',
  );
  for (const file of [...bodies, ...vendored]) assert.equal(/[^\x00-\x7f]/.exec(readFileSync(file, 'utf8'))?.[0], undefined, file);
  for (const body of bodies)
    assert.ok(readFileSync(body, 'utf8').startsWith("'use strict';"), `${body}: the directive comes first (the ES modules it is bundled from are strict)`);
});

test("before the app's first line, the agent's code is the main thread's preload and its body, and the vendored bundles, nothing of dist/src/", async () => {
  const app = runNode(
    [
      '--import',
      fixture('modules/loaded-files.mjs'),
      '--import',
      registerPath,
      '-e',
      'console.log(JSON.stringify([globalThis.loadedFiles(), Object.keys(require.cache)]))',
    ],
    {
      env: { PYRO_RUN_OUTPUT_DIR: fresh(), PYRO_RUN_QUIET: 'on' },
    },
  );
  assert.equal((await app.exit()).code, 0, app.stderr);
  const dist = path.join(repoRoot, 'dist');
  // The preload's body and the vendored bundles are compiled with their code cache
  // (src/util/code-cache.ts), not through Node's loader: require's cache has them, the loader's
  // hooks see the preload Node loads only.
  const [viaLoader, required] = JSON.parse(app.stdout.split('\n')[0]!) as [string[], string[]];
  const distUrl = `${pathToFileURL(dist).href}/`;
  assert.deepEqual(
    viaLoader.filter((url) => url.startsWith(distUrl)).map((url) => url.slice(distUrl.length)),
    ['preload/register.js'],
  );
  const ours = required.filter((file) => file.startsWith(`${dist}${path.sep}`)).map((file) => path.relative(dist, file));
  assert.ok(ours.includes(path.join('preload', 'register.cjs')), ours.join(', '));
  assert.ok(ours.includes(path.join('vendor', 'otel.cjs')), 'the agent started: its OpenTelemetry bundle is loaded');
  assert.deepEqual(
    ours.filter((file) => !file.startsWith(`vendor${path.sep}`) && file !== path.join('preload', 'register.cjs')),
    [],
  );
  // The body's entry, for its text, this V8 and this architecture: written by the first process, once its start has run.
  const entry = entryName('register.cjs', readFileSync(path.join(dist, 'preload', 'register.cjs'), 'utf8'));
  assert.ok(existsSync(path.join(dist, '.code-cache', entry)), entry);
});

test("NODE_DISABLE_COMPILE_CACHE: the preload's body and the vendored bundles load through Node's loader, as `require` loads them, with no code cache", async () => {
  const app = runNode(
    ['--import', fixture('modules/loaded-files.mjs'), '--import', registerPath, '-e', 'console.log(JSON.stringify(globalThis.loadedFiles()))'],
    {
      env: { PYRO_RUN_OUTPUT_DIR: fresh(), PYRO_RUN_QUIET: 'on', NODE_DISABLE_COMPILE_CACHE: '1' },
    },
  );
  assert.equal((await app.exit()).code, 0, app.stderr);
  const viaLoader = JSON.parse(app.stdout.split('\n')[0]!) as string[];
  for (const file of ['dist/preload/register.cjs', 'dist/vendor/otel.cjs'])
    assert.ok(viaLoader.includes(pathToFileURL(path.join(repoRoot, file)).href), `${file}: ${viaLoader.join(', ')}`);
});
