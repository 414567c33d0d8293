/**
 * An app on OpenTelemetry JS's 2.x line — @opentelemetry/api 1.9, a NodeTracerProvider registered
 * with `provider.register()` — installed from the registry into a scratch folder as its own
 * project, then run with pyro-run (which registers through its bundled API 1.10) in both orders.
 * What each must hold: test/support/own-otel.ts.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { fixture, registerPath, runNode } from '../support/child.js';
import { NPM_TIMEOUT_MS, npm } from '../support/npm.js';
import { checkOwnOtelApp } from '../support/own-otel.js';
import { scratchDirs } from '../support/scratch.js';

const { fresh } = scratchDirs('pyro-run-own-otel-v2-');
let project = '';

before(
  () => {
    project = fresh();
    copyFileSync(fixture('own-otel-v2/package.json'), path.join(project, 'package.json'));
    npm(['install', '--no-package-lock'], project);
    // The layout of test/fixtures, so routes.cjs finds ../apps/work.cjs.
    for (const dir of ['own-otel', 'apps']) mkdirSync(path.join(project, dir));
    for (const file of ['app.cjs', 'routes.cjs']) copyFileSync(fixture('own-otel', file), path.join(project, 'own-otel', file));
    copyFileSync(fixture('own-otel-v2/tracing-v2.cjs'), path.join(project, 'own-otel/tracing-v2.cjs'));
    copyFileSync(fixture('apps/work.cjs'), path.join(project, 'apps/work.cjs'));
  },
  { timeout: NPM_TIMEOUT_MS },
);

describe('an app on OpenTelemetry JS 2.x (API 1.9, NodeTracerProvider)', () => {
  const app = () => path.join(project, 'own-otel/app.cjs');
  it('registered from its main module, after the preload', (t) =>
    checkOwnOtelApp(t, { start: (env) => runNode(['--import', registerPath, app()], { cwd: project, env: { ...env, OWN_OTEL_IN_MAIN: 'tracing-v2.cjs' } }) }));
  it('loaded with --require, before the preload', (t) =>
    checkOwnOtelApp(t, {
      start: (env) => runNode(['--require', path.join(project, 'own-otel/tracing-v2.cjs'), '--import', registerPath, app()], { cwd: project, env }),
    }));
});
