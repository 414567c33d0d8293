/**
 * Apps that set up OpenTelemetry themselves (issue 19), in every order an app can take: its SDK
 * loaded before pyro-run's preload (`--require`), started from its main module after it, ESM, with
 * pyro-run's span processor put in by the app, assembled by hand with a context manager of its own,
 * and on Node 22 without AsyncContextFrame. What each must hold: test/support/own-otel.ts. In
 * local mode, the recording gets the app's spans too.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, NODE22, runCli, runNode } from '../support/child.js';
import { serverSpans } from '../support/linking.js';
import { load } from '../support/load.js';
import { checkOwnOtelApp, OWN_SERVICE, type OwnOtelRun } from '../support/own-otel.js';
import { readRecording } from '../support/read-recording.js';
import { OtlpSpanKind, startReceiver } from '../support/receiver.js';
import { scratchDirs } from '../support/scratch.js';

const REGISTER = 'pyro-run/register';
const APP = fixture('own-otel/app.cjs');
const ESM_APP = fixture('own-otel/app.mjs');
const SDK = fixture('own-otel/tracing.cjs');
const ESM_SDK = fixture('own-otel/tracing.mjs');
const PROVIDER = fixture('own-otel/tracing-provider.cjs');
const LOCAL_REQUESTS = 40;
const { fresh: tempDir } = scratchDirs('pyro-run-own-otel-');

const runs: (OwnOtelRun & { name: string })[] = [
  { name: "the app's NodeSDK loaded with --require, before pyro-run's preload", start: (env) => runCli(['node', '--require', SDK, APP], { env }) },
  {
    name: "the app's NodeSDK started from its main module, after pyro-run's preload",
    start: (env) => runCli([APP], { env: { ...env, OWN_OTEL_IN_MAIN: 'tracing.cjs' } }),
  },
  {
    name: "the app's NodeSDK with getNodeAutoInstrumentations(), from its main module, through node --import pyro-run/register",
    start: (env) => runNode(['--import', REGISTER, APP], { env: { ...env, OWN_OTEL_IN_MAIN: 'tracing.cjs', OWN_OTEL_INSTRUMENTATIONS: 'auto' } }),
  },
  {
    name: "the app's NodeSDK built with pyroscopeSpanProcessor(), loaded with --require before the preload",
    start: (env) => runNode(['--require', SDK, '--import', REGISTER, APP], { env: { ...env, OWN_OTEL_LINK_PROCESSOR: '1' } }),
  },
  {
    name: "the app's NodeSDK built with pyroscopeSpanProcessor(), from its main module",
    start: (env) => runCli([APP], { env: { ...env, OWN_OTEL_IN_MAIN: 'tracing.cjs', OWN_OTEL_LINK_PROCESSOR: '1' } }),
  },
  {
    name: 'an ESM app whose tracing.mjs is imported after the preload',
    start: (env) => runNode(['--import', REGISTER, '--import', ESM_SDK, ESM_APP], { env }),
  },
  {
    name: 'a TracerProvider and a context manager of its own, assembled by the app in its main module',
    start: (env) => runCli([APP], { env: { ...env, OWN_OTEL_IN_MAIN: 'tracing-provider.cjs' } }),
    ownContextManager: true,
  },
  {
    name: 'a TracerProvider and a context manager of its own, loaded with --require before the preload',
    start: (env) => runCli(['node', '--require', PROVIDER, APP], { env }),
    ownContextManager: true,
  },
  {
    name: "Node 22 without AsyncContextFrame, the app's NodeSDK from its main module",
    start: (env) => runNode(['--import', REGISTER, APP], { env: { ...env, OWN_OTEL_IN_MAIN: 'tracing.cjs' }, node: NODE22 }),
  },
];

for (const run of runs) test(run.name, (t) => checkOwnOtelApp(t, run));

test("local mode: the recording holds the app's spans under its service name, linked to the profiles, and the report counts each request", async () => {
  const receiver = await startReceiver();
  try {
    const out = tempDir();
    // --out records locally though the app's own exporter sends its spans to a collector.
    const app = runCli(['--out', out, '--flush-interval', '1000', '--sampling-interval', '2000', '--quiet', 'node', '--require', SDK, APP], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
    const port = (await app.line(/listening (\d+)/))[1];
    await load(`http://127.0.0.1:${port}`, (i) => `/work/${i}`, LOCAL_REQUESTS, 8);
    app.process.kill('SIGTERM');
    assert.equal((await app.exit()).code, 0, app.stderr);

    const run = readRecording(out);
    assert.equal(run.manifest.service, OWN_SERVICE);
    const roots = run.spans.filter((span) => span.kind === OtlpSpanKind.Server);
    assert.equal(roots.length, LOCAL_REQUESTS);
    for (const span of roots) {
      assert.equal(span.resource['service.name'], OWN_SERVICE);
      assert.equal(span.attributes['pyroscope.profile.id'], span.spanId);
    }
    assert.equal(serverSpans(receiver).length, LOCAL_REQUESTS, "the app's exporter still sent its spans");
    const rootIds = new Set(roots.map((span) => span.spanId));
    const hot = run.profiles
      .filter((p) => p.type === 'cpu')
      .flatMap((p) => p.samples)
      .filter((s) => s.stack.some((name) => /^hot_\d+_/.test(name)));
    const linked = hot.filter((s) => rootIds.has(s.labels.span_id ?? ''));
    assert.ok(hot.length >= 100 && linked.length / hot.length >= 0.99, `${linked.length} of ${hot.length} hot CPU samples carry a recorded root's span_id`);

    const report = runCli(['report', run.dir, '--json']);
    assert.equal((await report.exit()).code, 0, report.stderr);
    const { endpoints } = JSON.parse(report.stdout) as { endpoints: { name: string; count: number }[] };
    assert.equal(endpoints.find((e) => e.name === 'GET /work/:seq')?.count, LOCAL_REQUESTS);
  } finally {
    await receiver.close();
  }
});
