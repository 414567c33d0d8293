// The OTLP/HTTP endpoints (POST /v1/traces, /v1/metrics, /v1/logs), per the OTLP specification
// (opentelemetry-proto docs/specification.md, "OTLP/HTTP"):
// - Content-Type application/x-protobuf carries a binary Export<Signal>ServiceRequest,
//   application/json its OTLP/JSON form; anything else is 415;
// - Content-Encoding gzip is allowed (deflate too, as the collector accepts it);
// - success is 200 with an Export<Signal>ServiceResponse in the request's
//   encoding: an empty protobuf message (empty body) or `{}`;
// - a request that cannot be decoded is 400, with a google.rpc.Status body
//   (code INVALID_ARGUMENT = 3) in the request's encoding.
// Metrics and logs are decoded from protobuf, the exporters' default; their OTLP/JSON form is
// answered 415 here, as no test sends it.

import { gunzipSync, inflateSync } from 'node:zlib';
import { header, type ReceivedRequest, type Reply } from './exchange.js';
import { decodeTraceRequestJson } from './otlp-decode-json.js';
import { decodeTraceRequestProto } from './otlp-decode-proto.js';
import { decodeLogsRequestProto, type DecodedLogRecord } from './otlp-logs-decode.js';
import { decodeMetricsRequestProto, type DecodedMetric } from './otlp-metrics-decode.js';
import { ProtoWriter } from './protobuf.js';
import type { TraceExportRecord } from './receiver-types.js';

const PROTOBUF = 'application/x-protobuf';
const JSON_TYPE = 'application/json';

/** google.rpc.Code for an HTTP status, as OTLP servers map them. */
function rpcCodeOf(status: number): number {
  if (status === 400) return 3;
  if (status === 401) return 16;
  if (status === 403) return 7;
  if (status === 429) return 8;
  if (status === 503) return 14;
  if (status === 504) return 4;
  return 13;
}

export function encodingOf(request: ReceivedRequest): 'protobuf' | 'json' | undefined {
  const mediaType = header(request, 'content-type').split(';')[0]?.trim().toLowerCase();
  if (mediaType === PROTOBUF) return 'protobuf';
  if (mediaType === JSON_TYPE) return 'json';
  return undefined;
}

/** An OTLP error reply: google.rpc.Status{code=1, message=2} in the request's encoding. */
export function otlpErrorReply(request: ReceivedRequest, status: number, message: string): Reply {
  if (encodingOf(request) === 'json') {
    return {
      status,
      headers: { 'content-type': JSON_TYPE },
      body: JSON.stringify({ code: rpcCodeOf(status), message }),
      error: message,
    };
  }
  const body = new ProtoWriter().varintField(1, rpcCodeOf(status)).stringField(2, message).finish();
  return { status, headers: { 'content-type': PROTOBUF }, body, error: message };
}

function decompress(request: ReceivedRequest, contentEncoding: string): Buffer {
  switch (contentEncoding) {
    case '':
    case 'identity':
      return request.body;
    case 'gzip':
      return gunzipSync(request.body);
    case 'deflate':
      return inflateSync(request.body);
    default:
      throw new Error(`unsupported Content-Encoding ${JSON.stringify(contentEncoding)}`);
  }
}

export type TracesResult = { reply: Reply; record: TraceExportRecord | undefined };

export function handleTraces(request: ReceivedRequest): TracesResult {
  const { reply, decoded } = handleExport(request, { protobuf: decodeTraceRequestProto, json: (bytes) => decodeTraceRequestJson(bytes.toString('utf8')) });
  if (decoded === undefined) return { reply, record: undefined };
  const { encoding, contentEncoding, items: spans } = decoded;
  return { reply, record: { receivedAt: request.receivedAt, headers: request.headers, encoding, contentEncoding, spans } };
}

/** A metrics or logs export: the reply, and what it held when it could be decoded. */
export type SignalResult<T> = { reply: Reply; items: T[] | undefined };

export function handleMetrics(request: ReceivedRequest): SignalResult<DecodedMetric> {
  const { reply, decoded } = handleExport(request, { protobuf: decodeMetricsRequestProto });
  return { reply, items: decoded?.items };
}

export function handleLogs(request: ReceivedRequest): SignalResult<DecodedLogRecord> {
  const { reply, decoded } = handleExport(request, { protobuf: decodeLogsRequestProto });
  return { reply, items: decoded?.items };
}

/** A signal's request body decoders, by encoding; one without `json` answers OTLP/JSON with 415. */
type Decoders<T> = { protobuf: (bytes: Buffer) => T[]; json?: (bytes: Buffer) => T[] };

interface Decoded<T> {
  encoding: 'protobuf' | 'json';
  contentEncoding: string;
  items: T[];
}

/** One export request of any signal: media type, compression, decoding, and the reply for each. */
function handleExport<T>(request: ReceivedRequest, decoders: Decoders<T>): { reply: Reply; decoded: Decoded<T> | undefined } {
  const encoding = encodingOf(request);
  const decode = encoding === undefined ? undefined : decoders[encoding];
  if (encoding === undefined || decode === undefined) {
    const supported = decoders.json === undefined ? PROTOBUF : `${JSON_TYPE}, ${PROTOBUF}`;
    const message = `415 unsupported media type, supported: [${supported}]`;
    return { reply: { status: 415, headers: { 'content-type': 'text/plain' }, body: message, error: message }, decoded: undefined };
  }
  const contentEncoding = header(request, 'content-encoding').trim().toLowerCase();
  let items: T[];
  try {
    const bytes = decompress(request, contentEncoding);
    items = decode(bytes);
  } catch (error) {
    return { reply: otlpErrorReply(request, 400, (error as Error).message), decoded: undefined };
  }
  const reply: Reply =
    encoding === 'protobuf'
      ? { status: 200, headers: { 'content-type': PROTOBUF }, body: new Uint8Array() }
      : { status: 200, headers: { 'content-type': JSON_TYPE }, body: '{}' };
  return { reply, decoded: { encoding, contentEncoding, items } };
}
