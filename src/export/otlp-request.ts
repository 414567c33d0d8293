import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Config } from '../config.js';
import { otlpTraceSerializers } from '../vendor.js';
import type { Outgoing } from './outgoing.js';

/** Default OTLP/HTTP traces URL (OTel spec: http://localhost:4318 + /v1/traces). */
export const DEFAULT_TRACES_URL = 'http://localhost:4318/v1/traces';

/**
 * Serializes spans the way the OTLP/HTTP exporters do (the SDK's own serializers), into one
 * request for our sender: protobuf for `http/protobuf`, JSON for `http/json`.
 */
export function otlpRequestBuilder(traces: Config['traces']): ((spans: ReadableSpan[]) => Outgoing | undefined) & { prepare(): void } {
  const json = traces.protocol === 'http/json';
  // Loaded with the first batch, not at start.
  let serializer: ReturnType<typeof otlpTraceSerializers>['JsonTraceSerializer'] | undefined;
  const url = traces.endpoint ?? DEFAULT_TRACES_URL;
  const headers = { ...traces.headers, 'content-type': json ? 'application/json' : 'application/x-protobuf' };
  const prepare = () => {
    const { JsonTraceSerializer, ProtobufTraceSerializer } = otlpTraceSerializers();
    serializer ??= json ? JsonTraceSerializer : ProtobufTraceSerializer;
    return serializer;
  };
  const build = (spans: ReadableSpan[]): Outgoing | undefined => {
    const body = prepare().serializeRequest(spans);
    if (body === undefined) return undefined;
    return { kind: 'spans', url, headers, body, what: `${spans.length} spans` };
  };
  return Object.assign(build, { prepare: () => void prepare() });
}
