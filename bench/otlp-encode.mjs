// Span batch encoding: `node bench/otlp-encode.mjs [--rounds N]` (needs `npm run build`).
//
// A batch of express-shaped spans, made by the SDK as the http and express instrumentations make
// them (a server span with the http attributes and pyroscope.profile.id, four middleware spans
// under it), encoded to an OTLP/protobuf request by the SDK's ProtobufTraceSerializer (what
// OpenTelemetry's OTLP/proto exporter sends) and by ours (src/export/otlp/otlp-trace-encode.ts),
// alternately, in one process. Prints µs per batch and per span, median (min–max) over rounds, and
// the ratio per round. Checks first that both wrote the same bytes.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median, summary } from './lib/stats.mjs';
import { render, spread } from './lib/table.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(root, 'package.json'));
const { ProtobufTraceSerializer } = require('@opentelemetry/otlp-transformer');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { TracerProvider } = require('@opentelemetry/sdk-trace');
const api = require('@opentelemetry/api');
const { encodeTraceRequest } = await import(pathToFileURL(path.join(root, 'dist/src/export/otlp/otlp-trace-encode.js')).href);

const roundsArg = process.argv.indexOf('--rounds');
const ROUNDS = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 7;
const BATCH = 512;
const ENCODES = 200;

/** The batch: what the span batcher hands over under express load (OTEL_BSP_MAX_EXPORT_BATCH_SIZE). */
function expressBatch() {
  const ended = [];
  const collector = { onStart() {}, onEnd: (span) => void ended.push(span), forceFlush: async () => {}, shutdown: async () => {} };
  const resource = resourceFromAttributes({
    'service.name': 'bench',
    'host.name': 'bench-host',
    'host.arch': 'amd64',
    'process.pid': 4242,
    'process.executable.name': 'node',
    'process.executable.path': '/usr/local/bin/node',
    'process.command_args': ['/usr/local/bin/node', '--import', 'pyro-run/register', '/srv/app.js'],
    'process.runtime.version': '24.21.0',
    'process.runtime.name': 'nodejs',
    'process.runtime.description': 'Node.js',
    'telemetry.sdk.language': 'nodejs',
    'telemetry.sdk.name': 'opentelemetry',
    'telemetry.sdk.version': '3.0.0',
  });
  const provider = new TracerProvider({ resource, spanProcessors: [collector] });
  const http = provider.getTracer('@opentelemetry/instrumentation-http', '0.300.0');
  const express = provider.getTracer('@opentelemetry/instrumentation-express', '0.60.0');
  for (let request = 0; ended.length < BATCH; request++) {
    const server = http.startSpan('GET /json', {
      kind: api.SpanKind.SERVER,
      attributes: {
        'http.url': `http://127.0.0.1:3000/json?seq=${request}`,
        'http.host': '127.0.0.1:3000',
        'net.host.name': '127.0.0.1',
        'http.method': 'GET',
        'http.scheme': 'http',
        'http.target': `/json?seq=${request}`,
        'http.user_agent': 'wrk/4.2.0',
        'http.flavor': '1.1',
        'net.transport': 'ip_tcp',
        'net.host.ip': '127.0.0.1',
        'net.host.port': 3000,
        'net.peer.ip': '127.0.0.1',
        'net.peer.port': 40_000 + (request % 16),
      },
    });
    server.setAttribute('pyroscope.profile.id', server.spanContext().spanId);
    const parent = api.trace.setSpan(api.ROOT_CONTEXT, server);
    for (const [name, type] of [
      ['query', 'middleware'],
      ['expressInit', 'middleware'],
      ['/json', 'router'],
      ['/json', 'request_handler'],
    ]) {
      express.startSpan(`${type} - ${name}`, { attributes: { 'http.route': '/json', 'express.name': name, 'express.type': type } }, parent).end();
    }
    server.setAttributes({ 'http.status_code': 200, 'http.status_text': 'OK', 'http.route': '/json' });
    server.end();
  }
  return ended.slice(0, BATCH);
}

const spans = expressBatch();
const sdk = (batch) => ProtobufTraceSerializer.serializeRequest(batch);
const ours = (batch) => encodeTraceRequest(batch);
if (Buffer.compare(Buffer.from(sdk(spans)), Buffer.from(ours(spans))) !== 0) throw new Error('the two encoders wrote different bytes');

/** µs per batch, over `ENCODES` encodes. */
function time(encode) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < ENCODES; i++) encode(spans);
  return Number(process.hrtime.bigint() - start) / 1000 / ENCODES;
}

// Warm both to their optimized code before anything is measured.
time(sdk);
time(ours);
const runs = { sdk: [], ours: [], ratio: [] };
for (let round = 0; round < ROUNDS; round++) {
  const s = time(sdk);
  const o = time(ours);
  runs.sdk.push(s);
  runs.ours.push(o);
  runs.ratio.push(s / o);
}

const bytes = ours(spans).length;
const title = `otlp-encode — ${spans.length} express-shaped spans (${(bytes / 1024).toFixed(1)} KB of OTLP/protobuf), ${ENCODES} encodes per round, ${ROUNDS} round(s) alternating; medians (min–max)`;
const fmt = (xs, digits) => spread(summary(xs), digits);
const perSpan = (xs) => (median(xs) / spans.length).toFixed(2);
console.log(
  render(
    title,
    ['encoder', 'µs per batch', 'µs per span'],
    [
      ['SDK ProtobufTraceSerializer', fmt(runs.sdk, 0), perSpan(runs.sdk)],
      ['pyro-run otlp-trace-encode', fmt(runs.ours, 0), perSpan(runs.ours)],
    ],
  ),
);
console.log(`\nSDK / ours per round: ${fmt(runs.ratio, 2)} (above 1: ours is faster)`);
