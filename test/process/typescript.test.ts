/** A TypeScript app compiled with source maps: profiles name the .ts file and line. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';
import { repoRoot, runCli } from '../support/child.js';
import { load } from '../support/load.js';
import { scratchDirs } from '../support/scratch.js';

const { fresh } = scratchDirs('pyro-run-typescript-');

/** `file:line` of every sampled location in the named function, over the run's CPU profiles. */
function filesOf(runDir: string, functionName: string): Set<string> {
  const places = new Set<string>();
  for (const name of readdirSync(path.join(runDir, 'profiles')).filter((n) => n.endsWith('-cpu.pb.gz'))) {
    const profile = Profile.decode(gunzipSync(readFileSync(path.join(runDir, 'profiles', name))));
    const strings = profile.stringTable.strings;
    const functions = new Map(profile.function.map((fn) => [Number(fn.id), fn]));
    for (const location of profile.location) {
      for (const line of location.line) {
        const fn = functions.get(Number(line.functionId));
        if (fn && strings[Number(fn.name)] === functionName) places.add(`${strings[Number(fn.filename)]}:${line.line}`);
      }
    }
  }
  return places;
}

for (const sourceMaps of ['on', 'off'] as const) {
  test(`compiled TypeScript, source maps ${sourceMaps}`, async () => {
    const out = fresh();
    const build = path.join(out, 'build');
    execFileSync(process.execPath, [
      path.join(repoRoot, 'node_modules/typescript/bin/tsc'),
      '-p',
      path.join(repoRoot, 'examples/typescript/tsconfig.json'),
      '--outDir',
      build,
    ]);
    const app = runCli(
      [
        '--out',
        path.join(out, 'rec'),
        '--quiet',
        '--log-level',
        'debug',
        '--source-maps',
        sourceMaps,
        '--sampling-interval',
        '2000',
        path.join(build, 'server.js'),
      ],
      { env: { PORT: '0' } },
    );
    const port = (await app.line(/listening (\d+)/))[1];
    // Maps are read asynchronously after start, and take effect from the next window on: what
    // ran before that (start-up) keeps its compiled names. The load starts once they are in.
    if (sourceMaps === 'on') await app.line(/source maps: [1-9]\d* found/, 30_000, 'stderr');
    await load(`http://127.0.0.1:${port}`, (i) => `/n/${i}`, 40, 2);
    app.process.kill('SIGTERM');
    await app.exit();
    const [run] = readdirSync(path.join(out, 'rec'));
    assert.ok(run);
    const where = [...filesOf(path.join(out, 'rec', run), 'crunchNumbers')];
    assert.ok(where.length > 0, 'crunchNumbers was sampled');
    if (sourceMaps === 'on') {
      // The function spans lines 2–8 of math.ts.
      for (const place of where) assert.match(place, /examples\/typescript\/src\/math\.ts:[2-8]$/, `named by its TypeScript source: ${where.join(', ')}`);
    } else {
      for (const place of where) assert.match(place, /build\/math\.js:\d+$/, `named by the compiled file: ${where.join(', ')}`);
    }
  });
}

test("`pyro-run npm start` running TypeScript through Node's type stripping", async () => {
  const out = fresh();
  // The command is npm: the preload travels in NODE_OPTIONS to the node that `npm start` runs.
  const app = runCli(['--out', out, '--quiet', '--sampling-interval', '2000', 'npm', 'start'], {
    cwd: path.join(repoRoot, 'examples/typescript'),
    env: { PORT: '0' },
  });
  const port = (await app.line(/listening (\d+)/))[1];
  await load(`http://127.0.0.1:${port}`, (i) => `/n/${i}`, 30, 2);
  app.process.kill('SIGTERM');
  await app.exit();
  const runs = readdirSync(out);
  assert.equal(runs.length, 1, `one recording, from the app's node, none from npm's: ${runs.join(', ')}`);
  assert.match(runs[0]!, /^typescript-example-/);
  const where = [...filesOf(path.join(out, runs[0]!), 'crunchNumbers')];
  assert.ok(where.length > 0, 'crunchNumbers was sampled');
  for (const place of where) assert.match(place, /examples\/typescript\/src\/math\.ts:[2-8]$/, where.join(', '));
});

test("started by a dependency's CLI (as `npx next start` is): the service is the project's, and its source maps are found", async (t) => {
  const project = fresh();
  execFileSync(process.execPath, [
    path.join(repoRoot, 'node_modules/typescript/bin/tsc'),
    '-p',
    path.join(repoRoot, 'examples/typescript/tsconfig.json'),
    '--outDir',
    path.join(project, 'build'),
  ]);
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'launched-by-a-cli', private: true, type: 'module' }));
  // The framework's CLI, in the project's node_modules, runs the project's build from the working directory.
  const cli = path.join(project, 'node_modules/serve-it/bin/serve-it.mjs');
  mkdirSync(path.dirname(cli), { recursive: true });
  writeFileSync(path.join(project, 'node_modules/serve-it/package.json'), JSON.stringify({ name: 'serve-it', type: 'module' }));
  writeFileSync(
    cli,
    "import path from 'node:path';\nimport { pathToFileURL } from 'node:url';\nawait import(pathToFileURL(path.join(process.cwd(), 'build/server.js')).href);\n",
  );
  const out = fresh();
  const app = runCli(['--out', out, '--quiet', '--log-level', 'debug', '--sampling-interval', '2000', 'node', cli], { cwd: project, env: { PORT: '0' } });
  t.after(() => app.process.kill('SIGKILL'));
  const port = (await app.line(/listening (\d+)/))[1];
  await app.line(/source maps: [1-9]\d* found/, 30_000, 'stderr');
  await load(`http://127.0.0.1:${port}`, (i) => `/n/${i}`, 40, 2);
  app.process.kill('SIGTERM');
  await app.exit();
  const runs = readdirSync(out);
  assert.equal(runs.length, 1);
  assert.match(runs[0]!, /^launched-by-a-cli-/, `the project's name, not the CLI's: ${runs[0]}`);
  const where = [...filesOf(path.join(out, runs[0]!), 'crunchNumbers')];
  assert.ok(where.length > 0, 'crunchNumbers was sampled');
  for (const place of where) assert.match(place, /examples\/typescript\/src\/math\.ts:[2-8]$/, where.join(', '));
});

test('node -r ts-node/register app.ts runs through ts-node as without pyro-run: the preload is required, so Node does not take the entry to its ESM loader and strip its types', async () => {
  const dir = path.join(repoRoot, 'test/fixtures/ts-node-app');
  const env = { TS_NODE_PROJECT: path.join(dir, 'tsconfig.json') };
  const bare = execFileSync(process.execPath, ['-r', 'ts-node/register', 'app.ts'], { cwd: dir, env: { ...process.env, ...env }, encoding: 'utf8' });
  assert.equal(bare, 'painted Green\n');
  const app = runCli(['--out', fresh(), '--quiet', 'node', '-r', 'ts-node/register', 'app.ts'], { cwd: dir, env });
  const exit = await app.exit();
  assert.equal(exit.code, 0, app.stderr);
  assert.equal(app.stdout, bare);
});
