/**
 * Metrics and logs asked for as the OpenTelemetry docs set them (`OTEL_METRICS_EXPORTER=otlp`,
 * `OTEL_LOGS_EXPORTER=otlp`), from a real fastify app to a collector that takes them: the app's
 * request durations counted request by request, its pino lines as log records of the request's
 * span, the last ones sent when the app ends. pyro-run's own uploads are no requests of the app's:
 * they are not in its client metrics.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, runCli, type Child } from '../support/child.js';
import { startReceiver, OtlpSpanKind, type DecodedMetric, type Receiver } from '../support/receiver.js';

const SERVICE = 'orders';
const ORDERS = 4;
const HTTP_SCOPE = '@opentelemetry/instrumentation-http';
const UNDICI_SCOPE = '@opentelemetry/instrumentation-undici';

/** The app under the CLI, sending everything to `receiver`, with `ORDERS` orders served. */
async function servedOrders(receiver: Receiver): Promise<{ app: Child; port: number }> {
  const env = {
    OTEL_METRICS_EXPORTER: 'otlp',
    OTEL_LOGS_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    PYROSCOPE_SERVER_ADDRESS: receiver.url,
    PYROSCOPE_FLUSH_INTERVAL_MS: '1000',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  };
  const app = runCli(['--service-name', SERVICE, '--', fixture('apps/fastify-logged.cjs')], { env });
  const port = Number((await app.line(/^listening (\d+)$/m))[1]);
  for (let id = 1; id <= ORDERS; id++) assert.equal((await fetch(`http://127.0.0.1:${port}/orders/${id}`)).status, 200);
  // pyro-run's own uploads have gone out before the app ends, so its last metrics could count them.
  await receiver.waitFor(() => receiver.ingests.length > 0 && orderSpans(receiver).length === ORDERS);
  return { app, port };
}

const orderSpans = (receiver: Receiver) => receiver.spans.filter((span) => span.kind === OtlpSpanKind.Server && span.name.startsWith('GET /orders'));

function pointsOf(receiver: Receiver, scope: string, name: string): DecodedMetric['points'] {
  // Cumulative temporality (the exporter's default): the last export of a metric holds its totals.
  const last = receiver.metrics.findLast((metric) => metric.scope.name === scope && metric.name === name);
  assert.ok(last, `no ${name} from ${scope}; metrics: ${[...new Set(receiver.metrics.map((m) => m.name))].join(', ')}`);
  assert.equal(last.resource['service.name'], SERVICE);
  return last.points;
}

const countOf = (points: DecodedMetric['points']) => points.reduce((sum, point) => sum + (point.count ?? 0), 0);

function assertAppTelemetry(receiver: Receiver, port: number, served: number): void {
  // Every request the app served, once: the orders, the stock calls they made, and /close if asked.
  assert.equal(countOf(pointsOf(receiver, HTTP_SCOPE, 'http.server.request.duration')), served);
  const client = pointsOf(receiver, UNDICI_SCOPE, 'http.client.request.duration');
  assert.deepEqual(
    client.map((point) => point.attributes['server.port']),
    [port],
    "only the app's own fetch calls, none of pyro-run's uploads",
  );
  assert.equal(countOf(client), ORDERS);

  const spans = new Map(orderSpans(receiver).map((span) => [span.spanId, span]));
  const checked = receiver.logs.filter((record) => record.body === 'order checked');
  assert.equal(checked.length, ORDERS);
  for (const record of checked) {
    assert.equal(record.resource['service.name'], SERVICE);
    assert.equal(record.scope.name, '@opentelemetry/instrumentation-pino');
    const span = spans.get(record.spanId);
    assert.ok(span, `the log line's span ${record.spanId} is one of the order spans received`);
    assert.equal(record.traceId, span.traceId);
  }
}

test("metrics and logs to a collector: the app's own requests counted once each, its log lines in their request's span, the last ones sent at SIGTERM", async () => {
  const receiver = await startReceiver({ metricsAndLogs: true });
  try {
    const { app, port } = await servedOrders(receiver);
    app.process.kill('SIGTERM');
    assert.equal((await app.exit()).signal, 'SIGTERM');
    assertAppTelemetry(receiver, port, 2 * ORDERS);
    assert.equal(app.stderr, '');
  } finally {
    await receiver.close();
  }
});

test('metrics and logs to a collector: the last ones are sent when the app ends by itself', async () => {
  const receiver = await startReceiver({ metricsAndLogs: true });
  try {
    const { app, port } = await servedOrders(receiver);
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/close`, { headers: { connection: 'close' } })).text(), 'bye');
    assert.equal((await app.exit()).code, 0);
    assertAppTelemetry(receiver, port, 2 * ORDERS + 1);
    assert.ok(
      receiver.logs.some((record) => record.body === 'closing'),
      'the line logged as the app began to close',
    );
    assert.equal(app.stderr, '');
  } finally {
    await receiver.close();
  }
});

/**
 * Log lines written just before the process ends abruptly — the lines that say why — leave with the
 * final flush, as spans do: the SDK's batch processor would hold them for its delay (1 s) and lose
 * them. So do the metrics: the SDK's periodic reader exports every 60 s and would lose every count
 * of a process that ends sooner; the last collection is taken synchronously at exit. The app's exit
 * code and its own error output stay as they are.
 */
const abruptEnds = [
  { name: 'process.exit(3)', path: '/exit/3', line: 'giving up', code: 3, stderr: /^$/ },
  { name: 'an uncaught exception', path: '/throw', line: 'state corrupted', code: 1, stderr: /Error: fatal: state corrupted/ },
];
for (const end of abruptEnds) {
  test(`metrics and logs to a collector: the lines logged and the requests counted just before ${end.name} are sent, the exit code is the app's`, async () => {
    const receiver = await startReceiver({ metricsAndLogs: true });
    try {
      const { app, port } = await servedOrders(receiver);
      await fetch(`http://127.0.0.1:${port}${end.path}`).catch(() => undefined);
      const exit = await app.exit();
      assert.equal(exit.code, end.code, app.stderr);
      assert.match(app.stderr, end.stderr);
      assert.doesNotMatch(app.stderr, /pyro-run/);
      const last = receiver.logs.filter((record) => record.body === end.line);
      assert.equal(last.length, 1, `"${end.line}" among ${receiver.logs.map((record) => String(record.body)).join(', ')}`);
      assert.equal(last[0]!.severityText, 'error');
      assert.match(last[0]!.spanId, /^[0-9a-f]{16}$/, 'logged inside its request');
      // Each request whose server span ended was counted as it ended: the one ending the process may not have.
      const served = receiver.spans.filter((span) => span.kind === OtlpSpanKind.Server).length;
      assertAppTelemetry(receiver, port, served);
    } finally {
      await receiver.close();
    }
  });
}

test('a proxy pyro-run cannot use stops metrics and logs as it stops spans and profiles: none goes around it, and the warning says so once', async () => {
  const receiver = await startReceiver({ metricsAndLogs: true });
  try {
    // Loopback is never proxied: the collector is reached by a name the app resolves to it (a
    // direct connection would reach it; the proxy never could).
    const collector = receiver.url.replace('127.0.0.1', 'collector.internal');
    const env = {
      OTEL_METRICS_EXPORTER: 'otlp',
      OTEL_LOGS_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector,
      PYROSCOPE_SERVER_ADDRESS: collector,
      HTTP_PROXY: 'socks5://127.0.0.1:1080',
      NODE_OPTIONS: `--require ${fixture('net/hosts.cjs')}`,
      PYRO_RUN_TEST_HOSTS: JSON.stringify({ 'collector.internal': '127.0.0.1' }),
    };
    const app = runCli(['--service-name', SERVICE, '--', fixture('apps/fastify-logged.cjs')], { env });
    const port = Number((await app.line(/^listening (\d+)$/m))[1]);
    for (let id = 1; id <= ORDERS; id++) assert.equal((await fetch(`http://127.0.0.1:${port}/orders/${id}`)).status, 200);
    app.process.kill('SIGTERM');
    assert.equal((await app.exit()).signal, 'SIGTERM');
    // The exit waited for the final flush: whatever would have been sent has been.
    assert.deepEqual(
      { metrics: receiver.metrics.length, logs: receiver.logs.length, spans: receiver.spans.length, ingests: receiver.ingests.length },
      { metrics: 0, logs: 0, spans: 0, ingests: 0 },
    );
    const warnings = app.stderr.split('\n').filter((line) => line.includes('HTTP_PROXY'));
    assert.equal(warnings.length, 1, app.stderr);
    assert.match(warnings[0] ?? '', /socks5:\/\/.*metrics.*logs.*not sent \(not around the proxy either\)/);
  } finally {
    await receiver.close();
  }
});
