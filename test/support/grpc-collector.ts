// A stand-in for an OpenTelemetry Collector's OTLP/gRPC traces receiver (port 4317 in the
// collector's default config): the TraceService of opentelemetry-proto
// collector/trace/v1/trace_service.proto, served by @grpc/grpc-js over plaintext HTTP/2. The request
// is the same ExportTraceServiceRequest as OTLP/HTTP's protobuf body, decoded by the same decoder;
// the answer is an empty ExportTraceServiceResponse (full success), as the collector sends.

import { createRequire } from 'node:module';
import type * as Grpc from '@grpc/grpc-js';
import { decodeTraceRequestProto } from './otlp-decode-proto.js';
import type { DecodedSpan } from './otlp-types.js';

/** The method's full name: package opentelemetry.proto.collector.trace.v1, service TraceService. */
export const TRACE_EXPORT_METHOD = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

// @grpc/grpc-js is the OTLP/gRPC exporter's own dependency; the tests load that copy.
const grpc = createRequire(createRequire(import.meta.url).resolve('@opentelemetry/exporter-trace-otlp-grpc'))('@grpc/grpc-js') as typeof Grpc;

export interface GrpcExportRecord {
  /** Request metadata (gRPC's headers), lower-case keys, first value of each. */
  metadata: Record<string, string>;
  spans: DecodedSpan[];
}

export interface GrpcCollector {
  /** http://127.0.0.1:<port>, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  exports: readonly GrpcExportRecord[];
  spans(): DecodedSpan[];
  close(): Promise<void>;
}

const bytes = (value: Buffer) => value;

export async function startGrpcCollector(): Promise<GrpcCollector> {
  const exports: GrpcExportRecord[] = [];
  const server = new grpc.Server();
  const definition: Grpc.ServiceDefinition = {
    Export: {
      path: TRACE_EXPORT_METHOD,
      requestStream: false,
      responseStream: false,
      requestSerialize: bytes,
      requestDeserialize: bytes,
      responseSerialize: bytes,
      responseDeserialize: bytes,
    },
  };
  server.addService(definition, {
    Export: (call: Grpc.ServerUnaryCall<Buffer, Buffer>, callback: Grpc.sendUnaryData<Buffer>) => {
      let spans: DecodedSpan[];
      try {
        spans = decodeTraceRequestProto(call.request);
      } catch (error) {
        callback({ code: grpc.status.INVALID_ARGUMENT, details: String(error) });
        return;
      }
      const metadata: Record<string, string> = {};
      for (const [key, values] of Object.entries(call.metadata.getMap())) metadata[key] = String(values);
      exports.push({ metadata, spans });
      callback(null, Buffer.alloc(0));
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    exports,
    spans: () => exports.flatMap((record) => record.spans),
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}
