/**
 * The preload is one file (build/preload-bundle.ts): before the app's first line, a process
 * with the agent loads dist/register.js and the vendored OpenTelemetry bundles, no module of
 * dist/src/ one by one; and each bundled module still resolves paths from its own file.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { keepOwnUrl } from '../../build/own-url.js';
import { fixture, registerPath, repoRoot, runNode } from '../support/child.js';
import { scratchDirs } from '../support/scratch.js';

const { fresh } = scratchDirs('pyro-run-preload-bundle-');

test("a bundled module's import.meta.url is its own file's, resolved from the bundle's", () => {
  const cases: [string, string, string][] = [
    ['const require = createRequire(import.meta.url);', 'src/vendor.js', 'const require = createRequire(new URL("./src/vendor.js", import.meta.url).href);'],
    ["new URL('./flush-worker.js', import.meta.url)", 'src\\export\\final-flush.js', 'new URL(\'./flush-worker.js\', new URL("./src/export/final-flush.js", import.meta.url).href)'],
    ['a(import.meta.url); b(import.meta.url);', 'register.js', 'a(new URL("./register.js", import.meta.url).href); b(new URL("./register.js", import.meta.url).href);'],
    ['no url here', 'src/x.js', 'no url here'],
  ];
  for (const [text, file, expected] of cases) assert.equal(keepOwnUrl(text, file), expected, file);
});

test('every module in each preload bundle (the main thread\'s, a worker\'s) resolves its own file from the bundle\'s folder', () => {
  for (const bundle of [registerPath, path.join(repoRoot, 'dist/src/threads/worker-preload.js')]) {
    const own = [...readFileSync(bundle, 'utf8').matchAll(/new URL\("([^"]+)", import\.meta\.url\)/g)].map((match) => match[1]!);
    assert.ok(own.length > 0, `${bundle} keeps its modules' URLs`);
    for (const file of new Set(own)) {
      const resolved = fileURLToPath(new URL(file, pathToFileURL(bundle)));
      assert.ok(existsSync(resolved), `${path.relative(repoRoot, bundle)}: ${file} is ${resolved}, which does not exist`);
    }
  }
});

test("before the app's first line, the agent's code is dist/register.js and the vendored bundles, nothing of dist/src/", async () => {
  const app = runNode(['--import', fixture('modules/loaded-files.mjs'), '--import', registerPath, '-e', 'console.log(JSON.stringify(globalThis.loadedFiles()))'], {
    env: { PYRO_RUN_OUTPUT_DIR: fresh(), PYRO_RUN_QUIET: 'on' },
  });
  assert.equal((await app.exit()).code, 0, app.stderr);
  const dist = pathToFileURL(path.join(repoRoot, 'dist')).href;
  const ours = (JSON.parse(app.stdout.split('\n')[0]!) as string[]).filter((url) => url.startsWith(`${dist}/`)).map((url) => url.slice(dist.length + 1));
  assert.ok(ours.includes('register.js'), ours.join(', '));
  assert.ok(ours.includes('vendor/otel.cjs'), 'the agent started: its OpenTelemetry bundle is loaded');
  assert.deepEqual(ours.filter((file) => file !== 'register.js' && !file.startsWith('vendor/')), []);
});
