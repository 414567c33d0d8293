/**
 * One huge span must not take innocent spans down (issue 16): a batch whose request would exceed
 * MAX_OTLP_REQUEST_BYTES goes out as several requests, each within the bound or holding one span,
 * so a receiver that refuses a request too large loses only the spans of that request.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type ReadableSpan, type SpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { readConfig } from '../../src/config/index.js';
import { MAX_OTLP_REQUEST_BYTES } from '../../src/export/otlp/otlp-request.js';
import { OtlpTracesUpstream } from '../../src/export/otlp/otlp-traces-upstream.js';
import type { Outgoing } from '../../src/export/transport/outgoing.js';
import { Logger } from '../../src/log.js';
import { encodeSpans } from '../../src/export/otlp/otlp-trace-encode.js';
import { decodeTraceRequestJson } from '../support/otlp-decode-json.js';
import { decodeTraceRequestProto } from '../support/otlp-decode-proto.js';

/** `sizes[i]` characters of attribute on span i, named `span-<i>`. */
function spans(sizes: number[]): ReadableSpan[] {
  const ended: ReadableSpan[] = [];
  const collector: SpanProcessor = {
    onStart: () => {},
    onEnd: (span) => void ended.push(span),
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
  const tracer = new TracerProvider({ spanProcessors: [collector] }).getTracer('test');
  sizes.forEach((size, i) => {
    tracer.startSpan(`span-${i}`, { attributes: { payload: 'p'.repeat(size) } }).end();
  });
  return ended;
}

const MB = 1024 * 1024;
// 30 spans of 1 MB among 210 ordinary ones, as in the field report.
const MIXED = Array.from({ length: 240 }, (_, i) => (i % 8 === 3 ? MB : 200));

for (const protocol of ['http/protobuf', 'http/json'] as const) {
  const decode = protocol === 'http/json' ? (body: Uint8Array) => decodeTraceRequestJson(Buffer.from(body).toString('utf8')) : decodeTraceRequestProto;
  const traces = { ...readConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).config.traces, protocol };
  const log = new Logger(
    'warn',
    (text) => text,
    () => assert.fail('warned'),
  );
  /** The requests the traces upstream sends for a batch of span objects, or for the same spans encoded. */
  const build = {
    spans(batch: ReadableSpan[]): Outgoing[] {
      const sent: Outgoing[] = [];
      new OtlpTracesUpstream(traces, (request) => void sent.push(request), log).spans(batch);
      return sent;
    },
    encoded(batch: ReadableSpan[]): Outgoing[] {
      const sent: Outgoing[] = [];
      new OtlpTracesUpstream(traces, (request) => void sent.push(request), log).encodedSpans(encodeSpans(batch));
      return sent;
    },
  };

  it(`${protocol}: a batch within the bound is one request`, () => {
    const requests = build.spans(spans([200, 300, 400]));
    assert.equal(requests.length, 1);
    assert.deepEqual(
      decode(requests[0]!.body).map((span) => span.name),
      ['span-0', 'span-1', 'span-2'],
    );
    assert.match(requests[0]!.what, /^3 spans \(\d+ KB\)$/);
  });

  it(`${protocol}: a batch over the bound is split: spans over it alone and first, the others packed in order into requests within it`, () => {
    const batch = spans(MIXED);
    const requests = build.spans(batch);
    const groups = requests.map((request) => decode(request.body).map((span) => span.name));
    const huge = batch.filter((_, i) => MIXED[i] === MB).map((span) => span.name);
    const ordinary = batch.filter((_, i) => MIXED[i] !== MB).map((span) => span.name);
    assert.deepEqual(
      groups.slice(0, huge.length),
      huge.map((name) => [name]),
      'each 1 MB span alone, first',
    );
    assert.deepEqual(groups.slice(huge.length), [ordinary], 'the 210 ordinary spans in one request, in order');
    for (const request of requests.slice(huge.length)) assert.ok(request.body.length <= MAX_OTLP_REQUEST_BYTES, request.what);
  });

  it(`${protocol}: ordinary spans too many for one request are packed into as few as fit`, () => {
    const batch = spans(Array.from({ length: 12 }, () => 200 * 1024));
    const requests = build.spans(batch);
    assert.equal(requests.length, 3, requests.map((request) => request.what).join(', '));
    for (const request of requests) assert.ok(request.body.length <= MAX_OTLP_REQUEST_BYTES, request.what);
    assert.deepEqual(
      requests.flatMap((request) => decode(request.body).map((span) => span.name)),
      batch.map((span) => span.name),
    );
  });

  if (protocol === 'http/protobuf') {
    it(`${protocol}: spans already encoded make the same requests as the span objects, split the same way`, () => {
      const batch = spans(MIXED);
      const fromObjects = build.spans(batch);
      const fromEncoded = build.encoded(batch);
      assert.deepEqual(
        fromEncoded.map((request) => [request.what, Buffer.from(request.body)]),
        fromObjects.map((request) => [request.what, Buffer.from(request.body)]),
      );
      assert.ok(fromEncoded.length > 1);
    });
  }

  it(`${protocol}: a span over the bound by itself goes alone`, () => {
    const requests = build.spans(spans([100, 5 * MB, 100, 100]));
    assert.deepEqual(
      requests.map((request) => decode(request.body).map((span) => span.name)),
      [['span-1'], ['span-0', 'span-2', 'span-3']],
    );
    assert.match(requests[0]!.what, /^1 span \(5\.0 MB\)$/);
  });
}
