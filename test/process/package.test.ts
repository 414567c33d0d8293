/**
 * What users install: the packed tarball, installed with production dependencies only into a
 * fresh project, runs an app through `npx pyro-run` and through `node --import pyro-run/register`
 * (and `--require`).
 * The tarball carries the built code only: no tests, no TypeScript sources, no install scripts.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { Child, childEnv, repoRoot, runNode } from '../support/child.js';
import { NPM_TIMEOUT_MS, npm } from '../support/npm.js';
import { scratchDirs } from '../support/scratch.js';

const { fresh } = scratchDirs('pyro-run-package-');
let tarball = '';
let files: string[] = [];
let project = '';

before(
  () => {
    const packDir = fresh();
    // --ignore-scripts: `prepare` would rerun tsc and rewrite dist/ under the tests running beside
    // this one (a half-written module fails to import there). dist/ is already built.
    const [packed] = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', packDir], repoRoot)) as {
      filename: string;
      files: { path: string }[];
    }[];
    assert.ok(packed);
    tarball = path.join(packDir, packed.filename);
    files = packed.files.map((f) => f.path);
    project = fresh();
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'packed-app', private: true, type: 'module' }));
    writeFileSync(
      path.join(project, 'app.mjs'),
      "import http from 'node:http';\nawait fetch('data:,hello');\nconsole.log('app ran', http.STATUS_CODES[200]);\n",
    );
    writeFileSync(path.join(project, 'app.cjs'), "const http = require('node:http');\nconsole.log('app ran', http.STATUS_CODES[200]);\n");
    npm(['install', '--omit=dev', '--no-package-lock', tarball], project);
  },
  { timeout: NPM_TIMEOUT_MS * 2 },
);

describe('the packed package', { timeout: NPM_TIMEOUT_MS * 3 }, () => {
  it('holds the built code and the README only', () => {
    for (const preload of ['register', 'worker']) {
      assert.ok(files.includes(`dist/preload/${preload}.js`), 'the preload Node loads');
      assert.ok(files.includes(`dist/preload/${preload}.cjs`), 'its body');
    }
    assert.ok(files.includes('dist/page/report.js'), "the report page's script, which html.ts reads");
    assert.ok(files.includes('dist/page/diff.js'), "the diff page's script, which diff-html.ts reads");
    assert.ok(files.includes('dist/bin/pyro-run.js'));
    assert.ok(files.includes('dist/src/index.js'));
    assert.ok(files.includes('README.md'));
    const unwanted = files.filter(
      (f) =>
        f.startsWith('dist/test/') ||
        f.startsWith('test/') ||
        f.startsWith('src/') ||
        (f.endsWith('.ts') && !f.endsWith('.d.ts')) ||
        f.endsWith('.map') ||
        f.startsWith('bench/'),
    );
    assert.deepEqual(unwanted, []);
  });

  it('has no install scripts', () => {
    const manifest = JSON.parse(readFileSync(path.join(project, 'node_modules/pyro-run/package.json'), 'utf8')) as { scripts?: Record<string, string> };
    for (const hook of ['preinstall', 'install', 'postinstall']) assert.equal(manifest.scripts?.[hook], undefined, hook);
  });

  it('runs an app through `npx pyro-run app.mjs` (local mode)', async () => {
    // childEnv puts the Node under test first on PATH: npx and the bin's `#!/usr/bin/env node` use it.
    const npx = new Child(spawn('npx', ['--no-install', 'pyro-run', 'app.mjs'], { cwd: project, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] }));
    const exit = await npx.exit(60_000);
    assert.equal(exit.code, 0, npx.stderr);
    assert.match(npx.stdout, /app ran OK/);
    assert.match(npx.stderr, /pyro-run: recording to pyro-run-data\/packed-app-/);
  });

  it("writes that run's report page (`npx pyro-run report`), the page's script inlined from the package", async () => {
    const npx = new Child(spawn('npx', ['--no-install', 'pyro-run', 'report'], { cwd: project, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] }));
    const exit = await npx.exit(60_000);
    assert.equal(exit.code, 0, npx.stderr);
    const file = /^Report: (.+)$/m.exec(npx.stdout)?.[1];
    assert.ok(file, npx.stdout);
    const script = readFileSync(path.join(project, 'node_modules/pyro-run/dist/page/report.js'), 'utf8');
    assert.ok(readFileSync(file, 'utf8').includes(`<script>${script}</script>`));
  });

  for (const [flag, app] of [
    ['--import', 'app.mjs'],
    ['--require', 'app.cjs'],
  ] as const) {
    it(`runs an app through \`node ${flag} pyro-run/register ${app}\``, async () => {
      const child = runNode([flag, 'pyro-run/register', app], { cwd: project, env: { PYRO_RUN_QUIET: 'on' } });
      const exit = await child.exit(60_000);
      assert.equal(exit.code, 0, child.stderr);
      assert.match(child.stdout, /app ran OK/);
      assert.equal(child.stderr, '');
    });
  }
});
