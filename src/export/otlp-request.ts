import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Config } from '../config.js';
import { otlpJsonTraceSerializer } from '../vendor.js';
import { encodeTraceRequest } from './otlp-trace-encode.js';
import type { Outgoing } from './outgoing.js';

/** Default OTLP/HTTP traces URL (OTel spec: http://localhost:4318 + /v1/traces). */
export const DEFAULT_TRACES_URL = 'http://localhost:4318/v1/traces';

/**
 * Serializes spans the way the OTLP/HTTP exporters do, into one request for our sender: protobuf
 * for `http/protobuf` (our encoder, the SDK serializer's bytes at a fraction of its cost), JSON for
 * `http/json` (the SDK's own serializer).
 */
export function otlpRequestBuilder(traces: Config['traces']): ((spans: ReadableSpan[]) => Outgoing | undefined) & { prepare(): void } {
  const json = traces.protocol === 'http/json';
  const url = traces.endpoint ?? DEFAULT_TRACES_URL;
  const headers = { ...traces.headers, 'content-type': json ? 'application/json' : 'application/x-protobuf' };
  // The JSON serializer is loaded in the app's first turn (RemoteDestination's warm-up), not at the first batch.
  const serialize = json ? (spans: ReadableSpan[]) => otlpJsonTraceSerializer().serializeRequest(spans) : encodeTraceRequest;
  const build = (spans: ReadableSpan[]): Outgoing | undefined => {
    const body = serialize(spans);
    if (body === undefined) return undefined;
    return { kind: 'spans', url, headers, body, what: `${spans.length} spans` };
  };
  return Object.assign(build, { prepare: () => void (json && otlpJsonTraceSerializer()) });
}
