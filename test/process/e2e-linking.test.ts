/**
 * End to end, through real processes: an express app (ESM, CJS, both mixed, express loaded by a
 * dynamic import()) started through the CLI and through the preload flags, loaded with concurrent
 * requests, then stopped with SIGTERM. What the receiver decoded must link up: framework spans
 * under each request, spans ↔ profile samples, and every hot-function sample labelled with the
 * span of the request that ran it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Child, fixture, NODE22, NODE26, runCli, runNode } from '../support/child.js';
import { assertAttributed, assertLinked, linkedEnv, serverSpans } from '../support/linking.js';
import { serveThenTerminate } from '../support/load.js';
import { startReceiver } from '../support/receiver.js';

const SERVICE = 'e2e-shop';
const ESM_APP = fixture('apps/server.mjs');
const CJS_APP = fixture('apps/server.cjs');
/** "type": "module" package, .js entry, express loaded by a top-level-awaited dynamic import(). */
const ESM_PACKAGE_APP = fixture('modules/esm-package/server.js');
/** ESM entry importing a CJS module that require()s express. */
const MIXED_APP = fixture('modules/mixed/server.mjs');
/** The package's own export, resolved as users resolve it (self-reference from inside the package). */
const REGISTER = 'pyro-run/register';
const REQUESTS = 160;
const IN_FLIGHT = 24;

interface Variant {
  name: string;
  start: (env: Record<string, string>) => Child;
  traceIdLabel: boolean;
  /** Whether AsyncContextFrame should carry the sampler's context in the app. */
  acf: boolean;
}

const variants: Variant[] = [
  { name: 'ESM app through `pyro-run node app.mjs`', start: (env) => runCli(['node', ESM_APP], { env }), traceIdLabel: true, acf: true },
  {
    name: 'ESM app through `node --import pyro-run/register`',
    start: (env) => runNode(['--import', REGISTER, ESM_APP], { env }),
    traceIdLabel: true,
    acf: true,
  },
  { name: 'CJS app through `pyro-run app.cjs`', start: (env) => runCli([CJS_APP], { env }), traceIdLabel: false, acf: true },
  {
    name: 'CJS app through `node --require pyro-run/register`',
    start: (env) => runNode(['--require', REGISTER, CJS_APP], { env }),
    traceIdLabel: true,
    acf: true,
  },
  {
    name: 'Node 22 without AsyncContextFrame (`node22 --import`)',
    start: (env) => runNode(['--import', REGISTER, ESM_APP], { env, node: NODE22 }),
    traceIdLabel: true,
    acf: false,
  },
  { name: 'Node 26 (`node26 --import`)', start: (env) => runNode(['--import', REGISTER, ESM_APP], { env, node: NODE26 }), traceIdLabel: true, acf: true },
  { name: 'Node 22 through the CLI, which turns AsyncContextFrame on', start: (env) => runCli([NODE22, CJS_APP], { env }), traceIdLabel: true, acf: true },
  {
    name: '"type": "module" app, top-level await + dynamic import() of express, through `pyro-run app.js`',
    start: (env) => runCli([ESM_PACKAGE_APP], { env }),
    traceIdLabel: true,
    acf: true,
  },
  {
    name: 'mixed app (ESM importing CJS that requires express) through `pyro-run node app.mjs`',
    start: (env) => runCli(['node', MIXED_APP], { env }),
    traceIdLabel: false,
    acf: true,
  },
];

for (const variant of variants) {
  test(variant.name, async (t) => {
    const receiver = await startReceiver();
    try {
      const app = variant.start({
        OTEL_SERVICE_NAME: SERVICE,
        ...linkedEnv(receiver),
        PYRO_RUN_TRACE_ID_LABEL: variant.traceIdLabel ? 'on' : 'off',
        PYRO_RUN_LOG_LEVEL: 'debug',
      });
      await serveThenTerminate(app, (i) => `/work/${i}`, REQUESTS, IN_FLIGHT);
      assert.match(app.stderr, new RegExp(`async context frame ${variant.acf}`));
      // The sampler's tree is gathered several times a window (gather-pace.ts), and what follows
      // holds for windows made of several trees.
      const stops = [...app.stderr.matchAll(/profile window: (\d+) stops/g)].map((match) => Number(match[1]));
      assert.ok(
        stops.some((count) => count >= 2),
        `windows gathered in several stops: ${stops.join(', ')}`,
      );
      // No stop is so close to another that its profile could be empty: the sampler would read
      // that as V8's profiler being stuck and restart it.
      assert.doesNotMatch(app.stderr, /V8 profiler stopped sampling/);

      assertLinked(receiver, SERVICE);
      assert.equal(serverSpans(receiver).length, REQUESTS);
      for (const span of serverSpans(receiver)) assert.equal(span.name, 'GET /work/:seq');
      // The framework's own spans: express's request handler ran in each request's trace.
      const handlerTraces = receiver.spans.filter((span) => span.attributes['express.type'] === 'request_handler').map((span) => span.traceId);
      assert.deepEqual(new Set(handlerTraces), new Set(serverSpans(receiver).map((span) => span.traceId)));
      assert.equal(handlerTraces.length, REQUESTS);

      const hasTraceId = receiver.ingests.some((i) => i.samples.some((s) => s.labels.trace_id !== undefined));
      assert.equal(hasTraceId, variant.traceIdLabel);

      assertAttributed(t, receiver);
    } finally {
      await receiver.close();
    }
  });
}
