/**
 * How a process is started, read as rules: which scripts only launch the app (no agent of their
 * own), where the app lives when its entry script is a dependency's, and what PM2 tells the
 * processes it runs (their settings in cluster mode, their name).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { appDirs } from '../../src/util/app-dirs.js';
import { readConfig } from '../../src/config/index.js';
import { isLauncher, isSkipped } from '../../src/util/launchers.js';
import { envUnderPm2, pm2AppName } from '../../src/util/pm2.js';

describe('launchers get no agent', () => {
  const cases: [string, boolean][] = [
    ['/usr/lib/node_modules/npm/bin/npm-cli.js', true],
    ['/app/node_modules/.bin/tsx', true],
    ['/usr/local/bin/pm2', true],
    ['/usr/lib/node_modules/pm2/bin/pm2', true],
    ['/app/node_modules/pm2/bin/pm2-runtime', true],
    ['/usr/lib/node_modules/pm2/lib/Daemon.js', true],
    // PM2's process containers run the app itself.
    ['/usr/lib/node_modules/pm2/lib/ProcessContainerFork.js', false],
    ['/usr/lib/node_modules/pm2/lib/ProcessContainer.js', false],
    ['/app/node_modules/next/dist/bin/next', false],
    ['/app/server.js', false],
    ['/app/pm2-dashboard.js', false],
  ];
  for (const [script, launcher] of cases) it(`${script}: ${launcher ? 'a launcher' : 'the app'}`, () => assert.equal(isLauncher(script), launcher));
});

describe('--skip: the processes the user wants no agent in', () => {
  const cases: [string, string[], boolean][] = [
    // A package name: every script of that package.
    ['/app/node_modules/jest-worker/build/workers/processChild.js', ['jest-worker'], true],
    ['/app/node_modules/@acme/tool/bin/run.js', ['@acme/tool'], true],
    ['/app/node_modules/jest-worker-x/build/child.js', ['jest-worker'], false],
    ['/app/node_modules/@acme/tool-extra/bin/run.js', ['@acme/tool'], false],
    ['/app/jest-worker/child.js', ['jest-worker'], false],
    ['C:\\app\\node_modules\\jest-worker\\build\\child.js', ['jest-worker'], true],
    // A script path: by its end, whole path segments only.
    ['/app/scripts/migrate.js', ['migrate.js'], true],
    ['/app/scripts/migrate.js', ['scripts/migrate.js'], true],
    ['/app/scripts/migrate.js', ['./scripts/migrate.js'], true],
    ['/app/scripts/premigrate.js', ['migrate.js'], false],
    ['/app/other/migrate.js', ['scripts/migrate.js'], false],
    ['/app/seed.mts', ['seed.mts'], true],
    ['/app/server.js', ['migrate.js', 'jest-worker'], false],
    ['/app/server.js', [], false],
  ];
  for (const [script, entries, skipped] of cases) {
    it(`${script} with --skip ${entries.join(',') || '(none)'}: ${skipped ? 'no agent' : 'the agent'}`, () =>
      assert.equal(isSkipped(script, entries), skipped));
  }
  it('no script (node -e, the REPL): never skipped', () => assert.equal(isSkipped(undefined, ['x.js']), false));
});

describe("the app's folder", () => {
  const cases: { argv: string[]; cwd: string; dirs: string[] }[] = [
    { argv: ['node', 'server.js'], cwd: '/app', dirs: ['/app', '/app'] },
    { argv: ['node', '/app/dist/server.js'], cwd: '/', dirs: ['/app/dist', '/'] },
    { argv: ['node'], cwd: '/app', dirs: ['/app'] },
    // A dependency's CLI runs the project in the working directory.
    { argv: ['node', 'node_modules/next/dist/bin/next', 'start'], cwd: '/shop', dirs: ['/shop', '/shop/node_modules/next/dist/bin'] },
    { argv: ['node', '/shop/node_modules/.bin/next'], cwd: '/shop', dirs: ['/shop', '/shop/node_modules/.bin'] },
    { argv: ['node', '/usr/lib/node_modules/pm2/lib/ProcessContainerFork.js'], cwd: '/srv/api', dirs: ['/srv/api', '/usr/lib/node_modules/pm2/lib'] },
  ];
  for (const c of cases) it(`${c.argv.slice(1).join(' ') || '(no script)'} in ${c.cwd} → ${c.dirs[0]}`, () => assert.deepEqual(appDirs(c.argv, c.cwd), c.dirs));
});

describe('PM2', () => {
  it("a cluster worker's settings are read from pm2_env, as PM2's container spreads them later", () => {
    const env = envUnderPm2({
      PATH: '/bin',
      pm2_env: JSON.stringify({ name: 'api', pm_id: 3, PYROSCOPE_SERVER_ADDRESS: 'http://pyroscope:4040', env: { nested: 1 }, unset: null }),
    });
    assert.deepEqual(env, { PATH: '/bin', pm2_env: env.pm2_env, name: 'api', pm_id: '3', PYROSCOPE_SERVER_ADDRESS: 'http://pyroscope:4040' });
  });

  it('an env without pm2_env, or with one that is not JSON, is left as it is', () => {
    const plain = { PATH: '/bin' };
    assert.equal(envUnderPm2(plain), plain);
    const broken = { pm2_env: '{not json' };
    assert.equal(envUnderPm2(broken), broken);
  });

  it("names the service with the app's name in PM2, after the explicit settings and before package.json", () => {
    assert.equal(pm2AppName({ pm_id: '0', name: 'api' }), 'api');
    assert.equal(pm2AppName({ name: 'api' }), undefined, 'a `name` outside PM2 is nobody’s');
    const service = (env: Record<string, string>) => readConfig(env, { packageName: 'from-package' }).config.serviceName;
    assert.equal(service({ pm_id: '0', name: 'api' }), 'api');
    assert.equal(service({ pm_id: '0', name: 'api', PYROSCOPE_APPLICATION_NAME: 'explicit' }), 'explicit');
    assert.equal(service({ pm_id: '0', name: 'api', OTEL_SERVICE_NAME: 'otel' }), 'otel');
    assert.equal(service({}), 'from-package');
  });
});
