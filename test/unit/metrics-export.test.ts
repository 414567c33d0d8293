/**
 * Metrics through pyro-run's own pipeline (OTLP/HTTP metrics): a real MeterProvider collects into
 * the periodic reader, whose collections the OTLP exporters' own serializers encode into requests
 * for our sender; at exit a last collection is taken synchronously — what the SDK's periodic reader
 * cannot do — and encoded there and then.
 */
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { AggregationTemporality, DataPointType, MeterProvider, type ResourceMetrics, type SumMetricData } from '@opentelemetry/sdk-metrics';
import { readConfig, type MetricTemporality } from '../../src/config/index.js';
import { ownMetricsExport } from '../../src/export/remote-upstreams.js';
import { OtlpMetricsUpstream } from '../../src/export/otlp/otlp-metrics-upstream.js';
import { MAX_OTLP_REQUEST_BYTES } from '../../src/export/otlp/otlp-request.js';
import type { Outgoing } from '../../src/export/transport/outgoing.js';
import { Logger } from '../../src/log.js';
import { periodicReader, temporalityOf, type PeriodicReader } from '../../src/tracing/metric-reader.js';
import { decodeMetricsRequestProto } from '../support/otlp-metrics-decode.js';

const log = new Logger(
  'warn',
  (text) => text,
  () => {},
);

describe('temporality preference: each instrument as OpenTelemetry’s OTLP metric exporters choose', () => {
  const table: [MetricTemporality, Record<string, 'delta' | 'cumulative'>][] = [
    [
      'cumulative',
      {
        COUNTER: 'cumulative',
        UP_DOWN_COUNTER: 'cumulative',
        HISTOGRAM: 'cumulative',
        GAUGE: 'cumulative',
        OBSERVABLE_COUNTER: 'cumulative',
        OBSERVABLE_UP_DOWN_COUNTER: 'cumulative',
        OBSERVABLE_GAUGE: 'cumulative',
      },
    ],
    [
      'delta',
      {
        COUNTER: 'delta',
        UP_DOWN_COUNTER: 'cumulative',
        HISTOGRAM: 'delta',
        GAUGE: 'delta',
        OBSERVABLE_COUNTER: 'delta',
        OBSERVABLE_UP_DOWN_COUNTER: 'cumulative',
        OBSERVABLE_GAUGE: 'delta',
      },
    ],
    [
      'lowmemory',
      {
        COUNTER: 'delta',
        UP_DOWN_COUNTER: 'cumulative',
        HISTOGRAM: 'delta',
        GAUGE: 'cumulative',
        OBSERVABLE_COUNTER: 'cumulative',
        OBSERVABLE_UP_DOWN_COUNTER: 'cumulative',
        OBSERVABLE_GAUGE: 'cumulative',
      },
    ],
  ];
  for (const [preference, expected] of table) {
    it(preference, () => {
      const chosen = Object.fromEntries(
        Object.keys(expected).map((instrument) => [instrument, temporalityOf(preference, instrument as Parameters<typeof temporalityOf>[1])]),
      );
      assert.deepEqual(chosen, expected);
    });
  }
});

/** A reader on a real MeterProvider, with a counter, a histogram, an up-down counter and an observable gauge reporting `gauge.value`. */
function instrumented(temporality: MetricTemporality) {
  const handed: ResourceMetrics[] = [];
  const reader = periodicReader({
    temporality,
    intervalMs: 3_600_000,
    collectTimeoutMs: 1000,
    onMetrics: (metrics) => void handed.push(metrics),
    onError: (error) => assert.fail(String(error)),
  });
  const provider = new MeterProvider({ readers: [reader] });
  const meter = provider.getMeter('orders', '1.2.3');
  const gauge = { value: 7 };
  meter.createObservableGauge('queue.depth').addCallback((result) => result.observe(gauge.value));
  return {
    reader,
    provider,
    gauge,
    orders: meter.createCounter('orders'),
    latency: meter.createHistogram('latency', { unit: 'ms' }),
    inFlight: meter.createUpDownCounter('in_flight'),
  };
}

/** name → [temporality (sums and histograms), the points' values (sums, gauges) or counts (histograms)]. */
function pointsByName(collection: ResourceMetrics | undefined): Record<string, [AggregationTemporality | undefined, number[]]> {
  assert.ok(collection);
  const all = collection.scopeMetrics.flatMap((scope) => scope.metrics);
  return Object.fromEntries(
    all.map((metric) => [
      metric.descriptor.name,
      [
        metric.dataPointType === DataPointType.GAUGE ? undefined : (metric as SumMetricData).aggregationTemporality,
        metric.dataPoints.map((point) => (typeof point.value === 'number' ? point.value : (point.value as { count: number }).count)),
      ],
    ]),
  );
}

describe('the periodic reader', () => {
  it('collectSync at exit reads the synchronous instruments as they stand, under their scope and resource: what collect() reads', async () => {
    const { reader, orders, latency, inFlight, provider } = instrumented('cumulative');
    orders.add(3, { route: '/orders' });
    latency.record(12);
    latency.record(30);
    inFlight.add(2);
    const now = await reader.collectNow();
    const sync = reader.collectSync();
    assert.deepEqual(pointsByName(sync), {
      orders: [AggregationTemporality.CUMULATIVE, [3]],
      latency: [AggregationTemporality.CUMULATIVE, [2]],
      in_flight: [AggregationTemporality.CUMULATIVE, [2]],
      'queue.depth': [undefined, [7]],
    });
    assert.deepEqual(pointsByName(sync), pointsByName(now));
    assert.deepEqual(
      sync!.scopeMetrics.map((scope) => [scope.scope.name, scope.scope.version]),
      [['orders', '1.2.3']],
    );
    assert.equal(sync!.resource, now!.resource);
    await provider.shutdown();
  });

  it('collectSync takes what was recorded since the last collection; an observable instrument stays at its last report, as no callback can run at exit', async () => {
    const { reader, orders, gauge, provider } = instrumented('cumulative');
    orders.add(1);
    await reader.collectNow();
    orders.add(4);
    gauge.value = 9;
    assert.deepEqual(pointsByName(reader.collectSync()).orders, [AggregationTemporality.CUMULATIVE, [5]]);
    assert.deepEqual(pointsByName(reader.collectSync())['queue.depth'], [undefined, [7]]);
    assert.deepEqual(pointsByName(await reader.collectNow())['queue.depth'], [undefined, [9]], 'the callback runs when it can');
    await provider.shutdown();
  });

  it('delta: the last collection at exit holds only what the periodic one did not send', async () => {
    const { reader, orders, inFlight, provider } = instrumented('delta');
    orders.add(2);
    inFlight.add(5);
    assert.deepEqual(pointsByName(await reader.collectNow()).orders, [AggregationTemporality.DELTA, [2]]);
    orders.add(3);
    inFlight.add(-1);
    const last = pointsByName(reader.collectSync());
    assert.deepEqual(last.orders, [AggregationTemporality.DELTA, [3]]);
    assert.deepEqual(last.in_flight, [AggregationTemporality.CUMULATIVE, [4]], 'an up-down counter stays cumulative');
    await provider.shutdown();
  });

  it('an observable instrument whose callback throws: told once as a partial failure, the other metrics still handed over', async () => {
    const failures: [string, boolean][] = [];
    const reader = periodicReader({
      temporality: 'cumulative',
      intervalMs: 3_600_000,
      collectTimeoutMs: 1000,
      onMetrics: () => undefined,
      onError: (error, whole) => void failures.push([String(error), whole]),
    });
    const provider = new MeterProvider({ readers: [reader] });
    const meter = provider.getMeter('app');
    meter.createObservableGauge('broken').addCallback(() => {
      throw new Error('no reading');
    });
    meter.createCounter('orders').add(2);
    assert.deepEqual(pointsByName(await reader.collectNow()).orders, [AggregationTemporality.CUMULATIVE, [2]]);
    assert.deepEqual(failures, [['Error: no reading', false]]);
    await provider.shutdown();
  });

  it('nothing measured: nothing to send', async () => {
    const handed: ResourceMetrics[] = [];
    const reader: PeriodicReader = periodicReader({
      temporality: 'cumulative',
      intervalMs: 3_600_000,
      collectTimeoutMs: 1000,
      onMetrics: (m) => void handed.push(m),
      onError: () => undefined,
    });
    const provider = new MeterProvider({ readers: [reader] });
    provider.getMeter('idle').createCounter('never');
    assert.equal(reader.collectSync(), undefined);
    assert.equal(await reader.collectNow(), undefined);
    await provider.shutdown();
  });
});

/** The metrics export of `env` (remote mode: an OTLP endpoint is set). */
function metricsOf(env: Record<string, string>) {
  const metrics = ownMetricsExport(readConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_METRICS_EXPORTER: 'otlp', ...env }).config);
  assert.ok(metrics);
  return metrics;
}

/** A collection with `count` counters under one scope, each counting its index plus one. */
async function collection(count: number, attributeBytes = 0): Promise<ResourceMetrics> {
  const { reader, provider } = instrumented('cumulative');
  const meter = provider.getMeter('orders', '1.2.3');
  for (let i = 0; i < count; i++) meter.createCounter(`orders.${i}`).add(i + 1, { padding: 'x'.repeat(attributeBytes) });
  const collected = await reader.collectNow();
  await provider.shutdown();
  assert.ok(collected);
  return collected;
}

describe('the OTLP metrics upstream', () => {
  it('http/protobuf: one request to the metrics endpoint, with the headers asked for, that decodes to every metric', async () => {
    const sent: Outgoing[] = [];
    new OtlpMetricsUpstream(metricsOf({ OTEL_EXPORTER_OTLP_METRICS_HEADERS: 'x-scope-orgid=tenant-a' }), (request) => void sent.push(request), log).metrics(
      await collection(2),
    );
    assert.equal(sent.length, 1);
    const [request] = sent;
    assert.equal(request!.url, 'http://collector:4318/v1/metrics');
    assert.equal(request!.kind, 'metrics');
    assert.deepEqual(request!.headers, { 'x-scope-orgid': 'tenant-a', 'content-type': 'application/x-protobuf' });
    const decoded = decodeMetricsRequestProto(request!.body);
    assert.deepEqual(
      decoded.map((metric) => [metric.scope.name, metric.name, metric.kind, metric.points.map((point) => point.value)]),
      [
        ['orders', 'queue.depth', 'gauge', [7]],
        ['orders', 'orders.0', 'sum', [1]],
        ['orders', 'orders.1', 'sum', [2]],
      ],
    );
  });

  it('http/json: the OTLP/JSON encoding, as application/json', async () => {
    const sent: Outgoing[] = [];
    new OtlpMetricsUpstream(metricsOf({ OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json' }), (request) => void sent.push(request), log).metrics(
      await collection(1),
    );
    assert.equal(sent[0]!.headers['content-type'], 'application/json');
    const body = JSON.parse(Buffer.from(sent[0]!.body).toString('utf8')) as { resourceMetrics: { scopeMetrics: { metrics: { name: string }[] }[] }[] };
    assert.deepEqual(
      body.resourceMetrics[0]!.scopeMetrics[0]!.metrics.map((metric) => metric.name),
      ['queue.depth', 'orders.0'],
    );
  });

  it('a collection over the OTLP request bound is split between its metrics, each request under its scope', async () => {
    const sent: Outgoing[] = [];
    // 12 counters of ~200 KB of attributes each: ~2.4 MB in all.
    new OtlpMetricsUpstream(metricsOf({}), (request) => void sent.push(request), log).metrics(await collection(12, 200_000));
    assert.ok(sent.length >= 3, `${sent.length} requests`);
    for (const request of sent) assert.ok(request.body.length <= MAX_OTLP_REQUEST_BYTES, `${request.body.length} bytes`);
    const decoded = sent.flatMap((request) => decodeMetricsRequestProto(request.body));
    assert.deepEqual(decoded.map((metric) => metric.name).sort(), ['queue.depth', ...Array.from({ length: 12 }, (_, i) => `orders.${i}`)].sort());
    assert.ok(decoded.every((metric) => metric.scope.name === 'orders'));
  });

  it('gzip: compressed off the app’s turn; a collection still compressing at exit is encoded there, once, with the last one', async () => {
    const sent: Outgoing[] = [];
    const upstream = new OtlpMetricsUpstream(metricsOf({ OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip' }), (request) => void sent.push(request), log);
    upstream.metrics(await collection(2));
    assert.deepEqual(sent, [], 'compressing in the threadpool');
    const owed = upstream.owedSync({ window: undefined, spanBatches: [], logBatches: [], metrics: await collection(1) });
    assert.deepEqual(
      owed.map((request) => request.headers['content-encoding']),
      ['gzip', 'gzip'],
    );
    assert.deepEqual(
      owed.map((request) => decodeMetricsRequestProto(gunzipSync(request.body)).length),
      [3, 2],
    );
    await upstream.settle();
    assert.deepEqual(sent, [], 'the collection taken at exit is not sent a second time');
  });

  it('metrics are pyro-run’s to send over OTLP/HTTP in remote mode only: grpc, prometheus alone and local mode stay the NodeSDK’s', () => {
    const own = (env: Record<string, string>) => ownMetricsExport(readConfig({ OTEL_METRICS_EXPORTER: 'otlp', ...env }).config) !== undefined;
    assert.equal(own({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), true);
    assert.equal(own({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_METRICS_EXPORTER: 'otlp,prometheus' }), true);
    assert.equal(own({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'grpc' }), false);
    assert.equal(own({}), false, 'nothing configured: local mode');
    assert.equal(own({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_METRICS_EXPORTER: 'prometheus' }), false);
  });
});
