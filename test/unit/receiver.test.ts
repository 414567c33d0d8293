// Proves the test receiver is a faithful stand-in for Pyroscope's /ingest and
// an OTLP/HTTP collector: real OpenTelemetry exporters talk to it, pprof
// bodies in every accepted form decode the same way, malformed input is
// refused like the real server refuses it, and injected faults behave.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import { context, SpanKind as ApiSpanKind, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as OTLPProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as OTLPJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SimpleSpanProcessor, TracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace';
import { encodeProfile, type ProfileSpec } from '../support/pprof-build.js';
import { parseName, NameError } from '../support/pyroscope-name.js';
import { parseAtTime } from '../support/pyroscope-time.js';
import {
  basicAuthOf,
  functionNamesOf,
  isValidSpanId,
  isValidTraceId,
  labelsOf,
  sampleValue,
  OtlpSpanKind,
  startReceiver,
  type DecodedSpan,
  type Receiver,
} from '../support/receiver.js';

type ExporterConfig = NonNullable<ConstructorParameters<typeof OTLPProtoExporter>[0]>;

const SPAN_ID = '00f067aa0ba902b7';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

const CPU_SPEC: ProfileSpec = {
  sampleTypes: [
    ['samples', 'count'],
    ['cpu', 'nanoseconds'],
  ],
  periodType: ['cpu', 'nanoseconds'],
  period: 10_000_000,
  timeNanos: 1_700_000_000_000_000_000n,
  samples: [
    { stack: ['leaf', 'middle', 'main'], values: [3, 30_000_000], labels: { span_id: SPAN_ID, trace_id: TRACE_ID } },
    { stack: ['other', 'main'], values: [1, 10_000_000], labels: { span_id: 'not-a-span-id' } },
  ],
};

const WALL_SPEC: ProfileSpec = {
  sampleTypes: [
    ['samples', 'count'],
    ['wall', 'nanoseconds'],
  ],
  periodType: ['wall', 'nanoseconds'],
  period: 1_000_000,
  samples: [{ stack: ['idle'], values: [2, 2_000_000] }],
};

function ingestUrl(r: Receiver, params: Record<string, string>): string {
  return `${r.ingestUrl}?${new URLSearchParams(params).toString()}`;
}

function postRaw(r: Receiver, params: Record<string, string>, body: Uint8Array, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(ingestUrl(r, { format: 'pprof', ...params }), {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream', ...headers },
    body,
  });
}

function postMultipart(r: Receiver, params: Record<string, string>, form: FormData): Promise<Response> {
  return fetch(ingestUrl(r, params), { method: 'POST', body: form });
}

function profileForm(profile: Uint8Array, sampleTypeConfig?: object): FormData {
  const form = new FormData();
  form.append('profile', new Blob([profile]), 'profile.pprof');
  if (sampleTypeConfig) form.append('sample_type_config', new Blob([JSON.stringify(sampleTypeConfig)]), 'sample_type_config.json');
  return form;
}

function exportSpans(exporter: SpanExporter, provider: TracerProvider): Promise<void> {
  return provider.forceFlush().then(() => exporter.shutdown());
}

describe('OTLP traces from the real exporters', () => {
  let r: Receiver;
  before(async () => {
    r = await startReceiver();
  });
  after(() => r.close());

  it('decodes protobuf and JSON exports of the same spans identically and correctly', async () => {
    const proto = new OTLPProtoExporter({
      url: r.tracesUrl,
      headers: { authorization: `Basic ${Buffer.from('123:glc_secret').toString('base64')}`, 'x-scope-orgid': 'tenant-a' },
    });
    const json = new OTLPJsonExporter({ url: r.tracesUrl, headers: { 'x-scope-orgid': 'tenant-b' } });
    const provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'checkout', 'deployment.environment': 'test' }),
      spanProcessors: [new SimpleSpanProcessor({ exporter: proto }), new SimpleSpanProcessor({ exporter: json })],
    });
    const tracer = provider.getTracer('receiver-test', '1.2.3');

    const root = tracer.startSpan('GET /checkout', {
      kind: ApiSpanKind.SERVER,
      attributes: { 'http.method': 'GET', 'http.status_code': 200, ratio: 0.25, cached: false, tags: ['a', 'b'] },
    });
    const child = tracer.startSpan('db.query', { kind: ApiSpanKind.CLIENT }, trace.setSpan(context.active(), root));
    child.setAttribute('db.rows', 7);
    child.end();
    root.end();
    await Promise.all([exportSpans(proto, provider), exportSpans(json, provider)]);

    await r.waitFor(() => r.traceExports.length >= 4, { description: 'two spans × two encodings' });
    // Each span is its own concurrent export, so arrival order is not fixed.
    const byEncoding = (encoding: 'protobuf' | 'json'): DecodedSpan[] =>
      r.traceExports
        .filter((e) => e.encoding === encoding)
        .flatMap((e) => e.spans)
        .sort((a, b) => a.name.localeCompare(b.name));
    const protoSpans = byEncoding('protobuf');
    const jsonSpans = byEncoding('json');
    assert.equal(protoSpans.length, 2);
    assert.deepEqual(jsonSpans, protoSpans);

    const rootSpan = protoSpans.find((s) => s.name === 'GET /checkout');
    const childSpan = protoSpans.find((s) => s.name === 'db.query');
    assert.ok(rootSpan && childSpan);
    assert.equal(rootSpan.traceId, root.spanContext().traceId);
    assert.equal(rootSpan.spanId, root.spanContext().spanId);
    assert.equal(rootSpan.parentSpanId, '');
    assert.equal(rootSpan.kind, OtlpSpanKind.Server);
    assert.deepEqual(rootSpan.attributes, { 'http.method': 'GET', 'http.status_code': 200, ratio: 0.25, cached: false, tags: ['a', 'b'] });
    assert.equal(rootSpan.resource['service.name'], 'checkout');
    assert.equal(rootSpan.resource['deployment.environment'], 'test');
    assert.deepEqual({ name: rootSpan.scope.name, version: rootSpan.scope.version }, { name: 'receiver-test', version: '1.2.3' });
    assert.ok(rootSpan.startTimeUnixNano > 0n && rootSpan.endTimeUnixNano >= rootSpan.startTimeUnixNano);

    assert.equal(childSpan.traceId, rootSpan.traceId);
    assert.equal(childSpan.parentSpanId, rootSpan.spanId);
    assert.equal(childSpan.spanId, child.spanContext().spanId);
    assert.equal(childSpan.kind, OtlpSpanKind.Client);
    assert.equal(childSpan.attributes['db.rows'], 7);
    assert.ok(isValidTraceId(childSpan.traceId) && isValidSpanId(childSpan.spanId));

    const protoExport = r.traceExports.find((e) => e.encoding === 'protobuf');
    assert.equal(protoExport?.headers['x-scope-orgid'], 'tenant-a');
    assert.deepEqual(basicAuthOf(protoExport?.headers ?? {}), { username: '123', password: 'glc_secret' });
    assert.equal(r.traceExports.find((e) => e.encoding === 'json')?.headers['x-scope-orgid'], 'tenant-b');
    assert.ok(r.requests.every((req) => req.status === 200 && req.outcome === 'stored'));
    await provider.shutdown();
  });

  it('accepts gzip Content-Encoding from the exporter', async () => {
    r.reset();
    const compression = 'gzip' as ExporterConfig['compression'];
    const exporter = new OTLPProtoExporter({ url: r.tracesUrl, compression });
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    provider.getTracer('gz').startSpan('compressed').end();
    await exportSpans(exporter, provider);
    const exported = await r.waitFor(() => r.traceExports[0]);
    assert.equal(exported.contentEncoding, 'gzip');
    assert.deepEqual(
      exported.spans.map((s) => s.name),
      ['compressed'],
    );
    await provider.shutdown();
  });

  it('reads every OTLP/JSON AnyValue form, int64 strings and snake_case keys', async () => {
    r.reset();
    const body = {
      resource_spans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'json-svc' } }] },
          scopeSpans: [
            {
              scope: { name: 'manual' },
              spans: [
                {
                  traceId: TRACE_ID.toUpperCase(),
                  spanId: SPAN_ID,
                  name: 'hand-written',
                  kind: 2,
                  startTimeUnixNano: '1700000000000000001',
                  end_time_unix_nano: 1700000000000000,
                  attributes: [
                    { key: 'big', value: { intValue: '9007199254740993' } },
                    { key: 'small', value: { intValue: 5 } },
                    { key: 'bytes', value: { bytesValue: Buffer.from('hi').toString('base64') } },
                    { key: 'map', value: { kvlistValue: { values: [{ key: 'k', value: { boolValue: true } }] } } },
                    { key: 'empty', value: {} },
                  ],
                  status: { code: 2, message: 'boom' },
                },
              ],
            },
          ],
        },
      ],
    };
    const response = await fetch(r.tracesUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(response.status, 200);
    const [span] = await r.waitFor(() => r.spans.length === 1 && r.spans);
    assert.ok(span);
    assert.equal(span.traceId, TRACE_ID, 'hex ids are normalised to lower case');
    assert.equal(span.startTimeUnixNano, 1_700_000_000_000_000_001n);
    assert.equal(span.endTimeUnixNano, 1_700_000_000_000_000n);
    assert.deepEqual(span.attributes, {
      big: 9_007_199_254_740_993n,
      small: 5,
      bytes: Uint8Array.from(Buffer.from('hi')),
      map: { k: true },
      empty: null,
    });
    assert.deepEqual(span.status, { code: 2, message: 'boom' });
    assert.equal(span.resource['service.name'], 'json-svc');
  });

  it('answers like an OTLP/HTTP server: empty response body, 400 for garbage, 415 for other media types', async () => {
    r.reset();
    const ok = await fetch(r.tracesUrl, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: new Uint8Array() });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('content-type'), 'application/x-protobuf');
    assert.equal((await ok.arrayBuffer()).byteLength, 0);

    const okJson = await fetch(r.tracesUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.deepEqual(await okJson.json(), {});

    const garbage = await fetch(r.tracesUrl, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: 'not protobuf' });
    assert.equal(garbage.status, 400);
    const badJson = await fetch(r.tracesUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"xyz"}]}]}]}',
    });
    assert.equal(badJson.status, 400);
    assert.match(((await badJson.json()) as { message: string }).message, /traceId/);
    const text = await fetch(r.tracesUrl, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    assert.equal(text.status, 415);
    assert.equal(r.spans.length, 0);
  });
});

describe('OTLP metrics and logs from the real exporters', () => {
  // The NodeSDK's own metrics and logs SDKs and OTLP/protobuf exporters, from the copies it depends on.
  const fromSdkNode = createRequire(createRequire(import.meta.url).resolve('@opentelemetry/sdk-node'));
  const sdkMetrics = fromSdkNode('@opentelemetry/sdk-metrics') as typeof import('@opentelemetry/sdk-metrics');
  const sdkLogs = fromSdkNode('@opentelemetry/sdk-logs') as typeof import('@opentelemetry/sdk-logs');
  const { OTLPMetricExporter } = fromSdkNode('@opentelemetry/exporter-metrics-otlp-proto') as typeof import('@opentelemetry/exporter-metrics-otlp-proto');
  const { OTLPLogExporter } = fromSdkNode('@opentelemetry/exporter-logs-otlp-proto') as typeof import('@opentelemetry/exporter-logs-otlp-proto');
  const resource = resourceFromAttributes({ 'service.name': 'checkout' });
  let r: Receiver;
  before(async () => {
    r = await startReceiver({ metricsAndLogs: true });
  });
  after(() => r.close());

  it('decodes each metric kind with its points: attributes, sums and gauges by value, histograms by count and sum', async () => {
    const reader = new sdkMetrics.PeriodicExportingMetricReader({
      exporter: new OTLPMetricExporter({ url: `${r.url}/v1/metrics` }),
      exportIntervalMillis: 3_600_000,
    });
    const provider = new sdkMetrics.MeterProvider({ resource, readers: [reader] });
    const meter = provider.getMeter('receiver-test', '1.2.3');
    const orders = meter.createCounter('orders');
    orders.add(2, { region: 'eu' });
    orders.add(3, { region: 'us' });
    orders.add(1, { region: 'eu' });
    const latency = meter.createHistogram('latency', { unit: 's' });
    for (const seconds of [0.5, 1.5, 2]) latency.record(seconds, { route: '/checkout' });
    meter.createObservableGauge('queue.depth').addCallback((result) => result.observe(-7.25));
    await provider.forceFlush();

    const byName = new Map(r.metrics.map((metric) => [metric.name, metric]));
    assert.deepEqual(
      byName
        .get('orders')
        ?.points.map((point) => [point.attributes.region, point.value])
        .sort(),
      [
        ['eu', 3],
        ['us', 3],
      ],
    );
    assert.equal(byName.get('orders')?.kind, 'sum');
    const histogram = byName.get('latency');
    assert.deepEqual(
      { kind: histogram?.kind, unit: histogram?.unit, points: histogram?.points },
      { kind: 'histogram', unit: 's', points: [{ attributes: { route: '/checkout' }, count: 3, value: 4 }] },
    );
    assert.deepEqual(byName.get('queue.depth')?.points, [{ attributes: {}, value: -7.25 }]);
    for (const metric of r.metrics) {
      assert.equal(metric.resource['service.name'], 'checkout');
      assert.deepEqual({ name: metric.scope.name, version: metric.scope.version }, { name: 'receiver-test', version: '1.2.3' });
    }
    await provider.shutdown();
  });

  it('decodes log records with body, severity, attributes and the ids of the span they were made in', async () => {
    r.reset();
    const provider = new sdkLogs.LoggerProvider({
      resource,
      processors: [new sdkLogs.SimpleLogRecordProcessor({ exporter: new OTLPLogExporter({ url: `${r.url}/v1/logs` }) })],
    });
    const span = new TracerProvider().getTracer('t').startSpan('GET /checkout');
    provider.getLogger('receiver-test').emit({
      body: 'order checked',
      severityText: 'info',
      severityNumber: 9,
      attributes: { order: 42 },
      context: trace.setSpan(context.active(), span),
    });
    provider.getLogger('receiver-test').emit({ body: { outside: true } });
    await r.waitFor(() => r.logs.length === 2);

    const [inSpan, outside] = r.logs;
    assert.deepEqual(
      { body: inSpan?.body, severityText: inSpan?.severityText, severityNumber: inSpan?.severityNumber, attributes: inSpan?.attributes },
      { body: 'order checked', severityText: 'info', severityNumber: 9, attributes: { order: 42 } },
    );
    assert.equal(inSpan?.traceId, span.spanContext().traceId);
    assert.equal(inSpan?.spanId, span.spanContext().spanId);
    assert.equal(inSpan?.resource['service.name'], 'checkout');
    assert.deepEqual({ body: outside?.body, traceId: outside?.traceId, spanId: outside?.spanId }, { body: { outside: true }, traceId: '', spanId: '' });
    await provider.shutdown();
  });

  it('answers 404 for metrics and logs unless asked to take them, as a traces-only backend does', async () => {
    const tracesOnly = await startReceiver();
    try {
      for (const path of ['/v1/metrics', '/v1/logs']) {
        const reply = await fetch(tracesOnly.url + path, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: new Uint8Array() });
        assert.equal(reply.status, 404, path);
      }
    } finally {
      await tracesOnly.close();
    }
  });
});

describe('Pyroscope /ingest', () => {
  let r: Receiver;
  before(async () => {
    r = await startReceiver();
  });
  after(() => r.close());

  it('decodes raw, gzipped raw and multipart bodies identically', async () => {
    r.reset();
    const pprof = encodeProfile(CPU_SPEC);
    const fromSeconds = '1700000000';
    const params = {
      name: 'checkout{env=prod, region = eu-west-1 ,__private=x,__session_id__=s1}',
      from: fromSeconds,
      until: '1700000010',
      spyName: 'nodespy',
    };
    for (const response of [
      await postRaw(r, params, pprof),
      await postRaw(r, params, gzipSync(pprof)),
      await postMultipart(r, params, profileForm(gzipSync(pprof))),
    ]) {
      assert.equal(response.status, 200);
      assert.equal(await response.text(), '');
    }
    await r.waitFor(() => r.ingests.length === 3);

    assert.deepEqual(
      r.ingests.map((i) => [i.bodyForm, i.gzipped]),
      [
        ['raw', false],
        ['raw', true],
        ['multipart', true],
      ],
    );
    const [first, ...rest] = r.ingests;
    assert.ok(first);
    for (const other of rest) {
      assert.deepEqual(other.samples, first.samples);
      assert.deepEqual(other.profileTypeIds, first.profileTypeIds);
      assert.deepEqual(other.seriesLabels, first.seriesLabels);
    }

    assert.equal(first.serviceName, 'checkout');
    assert.deepEqual(first.labels, { env: 'prod', region: 'eu-west-1', __session_id__: 's1' });
    assert.equal(first.seriesLabels.service_name, 'checkout');
    assert.equal(first.seriesLabels.__name__, 'process_cpu');
    assert.equal(first.seriesLabels.pyroscope_spy, 'nodespy');
    assert.equal(first.from, 1_700_000_000_000);
    assert.equal(first.until, 1_700_000_010_000);
    assert.equal(first.spyName, 'nodespy');
    assert.equal(first.metricName, 'process_cpu');
    assert.deepEqual(first.profileTypeIds, ['process_cpu:samples:count:cpu:nanoseconds', 'process_cpu:cpu:nanoseconds:cpu:nanoseconds']);
    assert.equal(first.timeNanos, CPU_SPEC.timeNanos);
  });

  it('exposes samples through the helpers and says which span labels the server keeps', async () => {
    const ingest = r.ingests[0];
    assert.ok(ingest, 'previous test stores an ingest');
    const [linked, unlinked] = ingest.profile.sample;
    assert.ok(linked && unlinked);
    assert.deepEqual(functionNamesOf(ingest.profile, linked), ['leaf', 'middle', 'main']);
    assert.deepEqual(labelsOf(ingest.profile, linked), { span_id: SPAN_ID, trace_id: TRACE_ID });
    assert.equal(sampleValue(ingest.profile, linked, 'cpu'), 30_000_000);
    assert.equal(sampleValue(ingest.profile, linked, 'samples'), 3);
    assert.throws(() => sampleValue(ingest.profile, linked, 'wall'), /no sample type "wall"/);

    assert.deepEqual(ingest.samples[0], {
      stack: ['leaf', 'middle', 'main'],
      labels: { span_id: SPAN_ID, trace_id: TRACE_ID },
      values: { samples: 3, cpu: 30_000_000 },
      spanId: SPAN_ID,
      traceId: TRACE_ID,
    });
    assert.equal(ingest.samples[1]?.spanId, undefined, 'a span_id that is not 16 hex chars is not kept');
    assert.equal(isValidSpanId('00F067AA0BA902B7'), true, 'Go hex.Decode accepts upper case');
    assert.equal(isValidSpanId('00f067aa0ba902b'), false);
  });

  it('names wall profiles `wall` and accepts millisecond timestamps', async () => {
    r.reset();
    const response = await postRaw(r, { name: 'worker', from: '1700000000123', until: '1700000000999' }, encodeProfile(WALL_SPEC));
    assert.equal(response.status, 200);
    const ingest = await r.waitFor(() => r.ingests[0]);
    assert.equal(ingest.metricName, 'wall');
    assert.deepEqual(ingest.profileTypeIds, ['wall:samples:count:wall:nanoseconds', 'wall:wall:nanoseconds:wall:nanoseconds']);
    assert.equal(ingest.from, 1_700_000_000_123);
    assert.equal(ingest.until, 1_700_000_000_999);
    assert.equal(ingest.spyName, 'unknown', 'the server default');
    assert.equal(ingest.timeNanos, 1_700_000_000_123_000_000n, 'time_nanos unset: the server uses `from`');
  });

  it('applies a multipart sample_type_config display name when naming the metric', async () => {
    r.reset();
    const spec: ProfileSpec = { sampleTypes: [['bytes_total', 'bytes']], samples: [{ stack: ['alloc'], values: [64] }] };
    const config = { bytes_total: { 'display-name': 'alloc_space', units: 'bytes' } };
    assert.equal((await postMultipart(r, { name: 'mem' }, profileForm(encodeProfile(spec), config))).status, 200);
    const ingest = await r.waitFor(() => r.ingests[0]);
    assert.equal(ingest.metricName, 'memory');
    assert.deepEqual(ingest.profileTypeIds, ['memory:bytes_total:bytes::']);
  });

  it('accepts an empty profile with 200 and stores nothing, like the server', async () => {
    r.reset();
    assert.equal((await postRaw(r, { name: 'svc' }, new Uint8Array())).status, 200);
    assert.equal((await postMultipart(r, { name: 'svc' }, new FormData())).status, 200);
    await r.waitFor(() => r.requests.filter((q) => q.status !== undefined).length === 2);
    assert.equal(r.ingests.length, 0);
    assert.deepEqual(
      r.requests.map((q) => q.outcome),
      ['ignored', 'ignored'],
    );
  });

  it("rejects the whole upload when one series breaks Pyroscope's label limits, as its distributor does", async () => {
    r.reset();
    const withName = (spanName: string): Uint8Array =>
      encodeProfile({
        ...CPU_SPEC,
        samples: [
          { stack: ['fine', 'main'], values: [1, 10_000_000], labels: { span_id: SPAN_ID, span_name: 'GET /ok' } },
          { stack: ['long', 'main'], values: [1, 10_000_000], labels: { span_id: '00f067aa0ba902b8', span_name: spanName } },
        ],
      });
    const fits = await postRaw(r, { name: 'svc' }, withName('é'.repeat(1024)));
    assert.equal(fits.status, 200, 'a value of 2048 bytes fits');
    const tooLong = await postRaw(r, { name: 'svc' }, withName(`${'é'.repeat(1024)}x`));
    assert.equal(tooLong.status, 400);
    assert.match(await tooLong.text(), /has label value too long/);
    const tooMany = await postRaw(r, { name: `svc{${Array.from({ length: 26 }, (_, i) => `k${i}=v`).join(',')}}` }, withName('GET /x'));
    assert.equal(tooMany.status, 400, '26 static labels, the 4 of every upload and span_name: 31 in a series');
    assert.match(await tooMany.text(), /label names; limit 30/);
    await r.waitFor(() => r.requests.filter((q) => q.status !== undefined).length === 3);
    assert.equal(r.ingests.length, 1);
  });

  it('reads the profile only from a file part, as form.ReadField does', async () => {
    r.reset();
    const form = new FormData();
    form.append('profile', Buffer.from(encodeProfile(WALL_SPEC)).toString('latin1'));
    assert.equal((await postMultipart(r, { name: 'svc' }, form)).status, 200);
    await r.waitFor(() => r.requests[0]?.status !== undefined);
    assert.equal(r.ingests.length, 0);
  });
});

describe('malformed /ingest requests', () => {
  let r: Receiver;
  before(async () => {
    r = await startReceiver();
  });
  after(() => r.close());

  const pprof = encodeProfile(WALL_SPEC);
  const cases: Array<[string, () => Promise<Response>, number, RegExp]> = [
    ['missing name', () => postRaw(r, {}, pprof), 400, /^name: service name is required$/],
    ['space in the service name', () => postRaw(r, { name: 'my app' }, pprof), 400, /^name: invalid service name: my app: character is not allowed: ' '$/],
    ['bad label key', () => postRaw(r, { name: 'svc{bad-key=1}' }, pprof), 400, /^name: invalid label name: bad-key/],
    ['empty label key', () => postRaw(r, { name: 'svc{=1}' }, pprof), 400, /^name: label name is required$/],
    [
      'garbage body',
      () => postRaw(r, { name: 'svc' }, Buffer.from('this is not a pprof profile')),
      422,
      /^parsing IngestInput-pprof failed invalid_argument: /,
    ],
    // A trailing string_table entry (field 6) that declares 5 bytes but carries 1.
    ['truncated pprof', () => postRaw(r, { name: 'svc' }, Buffer.concat([pprof, Buffer.from([0x32, 0x05, 0x61])])), 422, /unexpected EOF/],
    ['corrupt gzip', () => postRaw(r, { name: 'svc' }, gzipSync(pprof).subarray(0, 20)), 422, /gzip/],
    ['multipart without boundary', () => postRaw(r, { name: 'svc', format: '' }, pprof, { 'content-type': 'multipart/form-data' }), 422, /multipart form/],
  ];
  for (const [title, send, status, message] of cases) {
    it(`refuses ${title} with ${status} and a JSON error`, async () => {
      const response = await send();
      assert.equal(response.status, status);
      assert.equal(response.headers.get('content-type'), 'application/json');
      const body = (await response.json()) as { code: string; message: string };
      assert.equal(body.code, status === 400 ? 'invalid_argument' : 'unknown');
      assert.match(body.message, message);
    });
  }

  it('stored none of them and logged each as rejected', () => {
    assert.equal(r.ingests.length, 0);
    assert.deepEqual(new Set(r.requests.map((q) => q.outcome)), new Set(['rejected']));
  });

  it('drops a query pair containing a raw ";" as Go does, losing the name', async () => {
    const response = await fetch(`${r.ingestUrl}?format=pprof&name=svc{a=b;c=d}`, { method: 'POST', body: pprof });
    assert.equal(response.status, 400);
  });

  it('says plainly when a body format is outside what it models', async () => {
    const response = await fetch(`${r.ingestUrl}?name=svc&format=jfr`, { method: 'POST', body: 'x' });
    assert.equal(response.status, 501);
    assert.match(((await response.json()) as { message: string }).message, /models only pprof/);
  });
});

describe('name and time parsing ported from the server', () => {
  it('parses names without escaping, trimming keys and values', () => {
    assert.deepEqual(parseName('app'), { serviceName: 'app', labels: {} });
    assert.deepEqual(parseName(' my-app/v2.x {k = v=w{x , b=}'), { serviceName: 'my-app/v2.x', labels: { k: 'v=w{x', b: '' } });
    assert.deepEqual(parseName('app{a=1}b=2}'), { serviceName: 'app', labels: { a: '1', b: '2' } }, 'text after } is more labels');
    assert.throws(() => parseName('app{a=1}{b=2}'), /invalid label name: \{b/, "a second '{' becomes part of a key");
    assert.deepEqual(parseName('app{novalue}'), { serviceName: 'app', labels: {} });
    assert.equal(parseName('app{__name__=other}').serviceName, 'other', '__name__ replaces the service name');
    assert.throws(() => parseName('{a=b}'), NameError);
  });

  it('reads from/until by digit count, and relative `now` offsets', () => {
    assert.equal(parseAtTime('1700000000'), 1_700_000_000_000);
    assert.equal(parseAtTime('1700000000123'), 1_700_000_000_123);
    assert.equal(parseAtTime('1700000000123456'), 1_700_000_000_123);
    assert.equal(parseAtTime('1700000000123456789'), 1_700_000_000_123);
    assert.equal(parseAtTime('20240131'), Date.UTC(2024, 0, 31));
    assert.equal(parseAtTime('now-1h', 10_000_000), 10_000_000 - 3_600_000);
    assert.equal(parseAtTime('now', 42), 42);
  });
});

describe('fault behaviours', () => {
  let r: Receiver;
  before(async () => {
    r = await startReceiver();
  });
  after(() => r.close());
  const pprof = encodeProfile(WALL_SPEC);

  it('answers an injected 500 the configured number of times, then recovers', async () => {
    r.reset();
    r.setBehaviour('ingest', { status: 500, times: 2 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await postRaw(r, { name: 'svc' }, pprof)).status);
    assert.deepEqual(statuses, [500, 500, 200]);
    assert.equal(r.ingests.length, 1);
    assert.deepEqual(
      r.requests.map((q) => q.outcome),
      ['injected', 'injected', 'stored'],
    );
  });

  it('sends 429 with Retry-After in the endpoint encoding', async () => {
    r.reset();
    r.setBehaviour('traces', { status: 429, retryAfter: '3' });
    const response = await fetch(r.tracesUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(response.status, 429);
    assert.equal(response.headers.get('retry-after'), '3');
    assert.deepEqual(await response.json(), { code: 8, message: 'test receiver: injected status 429' });
    r.setBehaviour('traces', undefined);
  });

  it('answers slowly with delayMs', async () => {
    r.reset();
    r.setBehaviour('ingest', { delayMs: 150, times: 1 });
    const started = performance.now();
    assert.equal((await postRaw(r, { name: 'svc' }, pprof)).status, 200);
    assert.ok(performance.now() - started >= 140);
    assert.equal(r.ingests.length, 1);
  });

  it('resets the connection', async () => {
    r.reset();
    r.setBehaviour('ingest', { reset: true, times: 1 });
    await assert.rejects(postRaw(r, { name: 'svc' }, pprof), TypeError);
    assert.equal(r.requests[0]?.outcome, 'reset');
  });

  it('requires the configured Authorization header', async () => {
    const guarded = await startReceiver({ requireAuthorization: { ingest: 'Bearer good' } });
    try {
      assert.equal((await postRaw(guarded, { name: 'svc' }, pprof)).status, 401);
      assert.equal((await postRaw(guarded, { name: 'svc' }, pprof, { authorization: 'Bearer good' })).status, 200);
      assert.equal(guarded.ingests.length, 1);
      assert.equal(guarded.ingests[0]?.headers.authorization, 'Bearer good');
    } finally {
      await guarded.close();
    }
  });

  it('hangs: the client times out, and close() still returns promptly', async () => {
    const hanging = await startReceiver();
    const exporter = new OTLPProtoExporter({ url: hanging.tracesUrl, timeoutMillis: 300 });
    const results: number[] = [];
    const capturing: SpanExporter = {
      export: (spans, done) => exporter.export(spans, (result) => done((results.push(result.code), result))),
      shutdown: () => exporter.shutdown(),
    };
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: capturing })] });
    try {
      hanging.setBehaviour('traces', { hang: true });
      provider.getTracer('t').startSpan('never-acknowledged').end();
      // The processor's flush rejects with the export error; the result code is what matters here.
      await provider.forceFlush().catch(() => undefined);
      assert.deepEqual(results, [1], 'ExportResultCode.FAILED after the client-side timeout');
      assert.ok(hanging.requests.some((q) => q.outcome === 'hung'));
      assert.equal(hanging.spans.length, 0);

      const before = hanging.requests.length;
      const fetchHung = fetch(hanging.tracesUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      await hanging.waitFor(() => hanging.requests.length > before);
      const started = performance.now();
      await hanging.close();
      assert.ok(performance.now() - started < 1000, 'close() does not wait for hung sockets');
      await assert.rejects(fetchHung);
    } finally {
      await hanging.close();
      await provider.shutdown();
    }
  });
});

describe('waitFor', () => {
  it('resolves on the event that satisfies it, with the value', async () => {
    const r = await startReceiver();
    try {
      const waiting = r.waitFor(() => r.ingests.find((i) => i.serviceName === 'late'));
      await postRaw(r, { name: 'early' }, encodeProfile(WALL_SPEC));
      await postRaw(r, { name: 'late' }, encodeProfile(WALL_SPEC));
      assert.equal((await waiting).serviceName, 'late');
    } finally {
      await r.close();
    }
  });

  it('times out with what was received', async () => {
    const r = await startReceiver();
    try {
      await postRaw(r, { name: 'svc' }, encodeProfile(WALL_SPEC));
      await assert.rejects(
        r.waitFor(() => r.spans.find((s) => s.name === 'missing'), { timeoutMs: 50, description: 'span "missing"' }),
        (error: Error) =>
          /timed out after 50ms: span "missing"/.test(error.message) &&
          /POST \/ingest → 200/.test(error.message) &&
          /svc wall \(1 samples\)/.test(error.message),
      );
    } finally {
      await r.close();
    }
  });

  it('rejects pending and later unsatisfied waits once the receiver is closed', async () => {
    const r = await startReceiver();
    const waiting = r.waitFor(() => false);
    await r.close();
    await assert.rejects(waiting, /receiver closed/);
    await assert.rejects(
      r.waitFor(() => r.ingests.length > 0),
      /receiver closed/,
    );
    assert.equal(await r.waitFor(() => 'already true'), 'already true');
  });
});
