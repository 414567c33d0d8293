// Decodes an OTLP ExportLogsServiceRequest from protobuf bytes.
// Field numbers: opentelemetry-proto opentelemetry/proto/collector/logs/v1/logs_service.proto
// and logs/v1/logs.proto.

import { addKeyValue, decodeAnyValue, decodeExportRequest, eachField, lenField, type SignalMessages } from './otlp-decode-proto.js';
import { expectWireType, WireType } from './protobuf.js';
import { hexOf, type AttributeValue, type Attributes, type DecodedScope } from './otlp-types.js';

export interface DecodedLogRecord {
  body: AttributeValue;
  severityText: string;
  severityNumber: number;
  /** Lowercase hex, '' when the record was made outside a span. */
  traceId: string;
  spanId: string;
  attributes: Attributes;
  resource: Attributes;
  scope: DecodedScope;
}

const LOGS_MESSAGES: SignalMessages = {
  resources: 'ExportLogsServiceRequest.resource_logs',
  scopes: 'ResourceLogs.scope_logs',
  items: 'ScopeLogs.log_records',
};

export function decodeLogsRequestProto(bytes: Uint8Array): DecodedLogRecord[] {
  return decodeExportRequest(bytes, LOGS_MESSAGES, decodeLogRecord);
}

function decodeLogRecord(bytes: Uint8Array, resource: Attributes, scope: DecodedScope): DecodedLogRecord {
  const record: DecodedLogRecord = { body: null, severityText: '', severityNumber: 0, traceId: '', spanId: '', attributes: {}, resource, scope };
  eachField(bytes, (tag, r) => {
    switch (tag.field) {
      case 2:
        expectWireType(tag, WireType.Varint, 'LogRecord.severity_number');
        record.severityNumber = r.int32();
        return true;
      case 3:
        expectWireType(tag, WireType.Len, 'LogRecord.severity_text');
        record.severityText = r.string();
        return true;
      case 5:
        record.body = decodeAnyValue(lenField(tag, r, 'LogRecord.body'));
        return true;
      case 6:
        addKeyValue(record.attributes, lenField(tag, r, 'LogRecord.attributes'));
        return true;
      case 9:
        record.traceId = hexOf(lenField(tag, r, 'LogRecord.trace_id'));
        return true;
      case 10:
        record.spanId = hexOf(lenField(tag, r, 'LogRecord.span_id'));
        return true;
      default:
        return false;
    }
  });
  return record;
}
