import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import type { Child } from './child.js';
import { assertAttributed, assertLinked, linkedEnv, serverSpans } from './linking.js';
import { load } from './load.js';
import { type DecodedSpan, type Receiver, startReceiver } from './receiver.js';

/** The service name the fixtures' own OpenTelemetry set-ups give in code (test/fixtures/own-otel*). */
export const OWN_SERVICE = 'own-otel-app';
const REQUESTS = 120;
const IN_FLIGHT = 16;
/** What OpenTelemetry JS's OTLP exporters send as User-Agent: the app's exporter, not pyro-run's sender. */
const OTEL_EXPORTER_AGENT = /^OTel-OTLP-Exporter-JavaScript\//;

export interface OwnOtelRun {
  start: (env: Record<string, string>) => Child;
  /** The hand-assembled set-up reports on its own context manager at exit. */
  ownContextManager?: boolean;
}

/**
 * Runs an express app that set up OpenTelemetry itself (test/fixtures/own-otel/app.cjs: each
 * request's work inside a manual span of the app's own tracer) with pyro-run, under load, then
 * SIGTERM; and checks what a user relies on: the app's SDK stayed in charge of its spans and
 * pyro-run linked them —
 * - spans and profiles are filed under the app's service name; its exporter sent every span, and
 *   no span and no request was exported twice;
 * - every HTTP root carries pyroscope.profile.id; the manual span is in its request's trace;
 * - ≥ 99% of the CPU of each request's work carries the span_id of that request's root.
 */
export async function checkOwnOtelApp(t: TestContext, run: OwnOtelRun): Promise<void> {
  const receiver = await startReceiver();
  try {
    // OTEL_EXPORTER_OTLP_ENDPOINT is read by the app's own exporter, as OTel's docs set it up.
    const app = run.start({ ...linkedEnv(receiver), PYRO_RUN_LOG_LEVEL: 'info' });
    const port = (await app.line(/listening (\d+)/))[1];
    await load(`http://127.0.0.1:${port}`, (i) => `/work/${i}`, REQUESTS, IN_FLIGHT);
    app.process.kill('SIGTERM');
    const exit = await app.exit();
    assert.equal(exit.code, 0, `the app's SIGTERM handler exits 0: ${JSON.stringify(exit)}\n${app.stderr}`);

    assert.match(app.stderr, /the app's own OpenTelemetry SDK handles its spans \(service\.name "own-otel-app"\)/);
    // The one thing said about pyro-run's own span settings, and nothing else to warn about.
    const warnings = app.stderr.split('\n').filter((line) => /warning|error/i.test(line));
    assert.deepEqual(warnings, [
      "pyro-run: warning: OTEL_EXPORTER_OTLP_ENDPOINT: not used by pyro-run for spans — the app's own OpenTelemetry SDK exports them, with its own settings",
    ]);
    if (run.ownContextManager) {
      const [, entered, inCharge] = app.stdout.match(/own context manager entered (\d+) contexts, in charge: (\w+)/) ?? [];
      assert.equal(inCharge, 'true', app.stdout);
      assert.ok(Number(entered) >= REQUESTS, `the app's context manager carried the requests: ${entered}`);
    }

    assertOwnSpans(receiver);
    assertAttributed(t, receiver);
  } finally {
    await receiver.close();
  }
}

function assertOwnSpans(receiver: Receiver): void {
  assertLinked(receiver, OWN_SERVICE);
  const ids = receiver.spans.map((span) => span.spanId);
  assert.equal(new Set(ids).size, ids.length, 'no span was exported twice');
  for (const exported of receiver.traceExports) assert.match(String(exported.headers['user-agent']), OTEL_EXPORTER_AGENT, "the app's exporter sent the spans");

  const servers = serverSpans(receiver);
  assert.equal(servers.length, REQUESTS, 'one HTTP root per request: no request instrumented twice');
  for (const span of servers) assert.equal(span.name, 'GET /work/:seq');
  const byId = new Map(receiver.spans.map((span) => [span.spanId, span]));
  const rootOf = (span: DecodedSpan): DecodedSpan => {
    const parent = span.parentSpanId ? byId.get(span.parentSpanId) : undefined;
    return parent ? rootOf(parent) : span;
  };
  const manual = receiver.spans.filter((span) => span.name === 'compute');
  assert.equal(manual.length, REQUESTS, "every request's manual span was exported");
  for (const span of manual) {
    assert.equal(span.scope.name, 'own-app');
    assert.ok(servers.includes(rootOf(span)), `manual span ${span.spanId} sits under its request's HTTP root`);
  }
}
