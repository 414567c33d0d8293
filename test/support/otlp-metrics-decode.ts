// Decodes an OTLP ExportMetricsServiceRequest from protobuf bytes, as far as the tests read it:
// each metric's name, unit, kind, and per data point its attributes and what it counts.
// Field numbers: opentelemetry-proto opentelemetry/proto/collector/metrics/v1/metrics_service.proto
// and metrics/v1/metrics.proto.

import { addKeyValue, decodeExportRequest, eachField, lenField, type SignalMessages } from './otlp-decode-proto.js';
import { expectWireType, WireType } from './protobuf.js';
import { int64Value, type Attributes, type DecodedScope } from './otlp-types.js';

export type MetricKind = 'gauge' | 'sum' | 'histogram' | 'exponentialHistogram' | 'summary' | 'none';

export interface DecodedDataPoint {
  attributes: Attributes;
  /** Histograms and summaries: how many measurements the point holds. */
  count?: number;
  /** Gauges and sums: the value (as_int or as_double). Histograms and summaries: their sum. */
  value?: number;
}

export interface DecodedMetric {
  name: string;
  unit: string;
  kind: MetricKind;
  points: DecodedDataPoint[];
  resource: Attributes;
  scope: DecodedScope;
}

/** Metric's data oneof: field number → kind, and the field of its points' attributes. */
const DATA_FIELDS: Record<number, { kind: MetricKind; attributesField: number }> = {
  5: { kind: 'gauge', attributesField: 7 },
  7: { kind: 'sum', attributesField: 7 },
  9: { kind: 'histogram', attributesField: 9 },
  10: { kind: 'exponentialHistogram', attributesField: 1 },
  11: { kind: 'summary', attributesField: 7 },
};

const METRICS_MESSAGES: SignalMessages = {
  resources: 'ExportMetricsServiceRequest.resource_metrics',
  scopes: 'ResourceMetrics.scope_metrics',
  items: 'ScopeMetrics.metrics',
};

export function decodeMetricsRequestProto(bytes: Uint8Array): DecodedMetric[] {
  return decodeExportRequest(bytes, METRICS_MESSAGES, decodeMetric);
}

function decodeMetric(bytes: Uint8Array, resource: Attributes, scope: DecodedScope): DecodedMetric {
  const metric: DecodedMetric = { name: '', unit: '', kind: 'none', points: [], resource, scope };
  eachField(bytes, (tag, r) => {
    const data = DATA_FIELDS[tag.field];
    if (data) {
      metric.kind = data.kind;
      eachField(lenField(tag, r, `Metric.${data.kind}`), (inner, ir) => {
        if (inner.field !== 1) return false;
        metric.points.push(decodePoint(lenField(inner, ir, `${data.kind}.data_points`), data));
        return true;
      });
      return true;
    }
    if (tag.field === 1 || tag.field === 3) {
      expectWireType(tag, WireType.Len, tag.field === 1 ? 'Metric.name' : 'Metric.unit');
      if (tag.field === 1) metric.name = r.string();
      else metric.unit = r.string();
      return true;
    }
    return false;
  });
  return metric;
}

function decodePoint(bytes: Uint8Array, data: { kind: MetricKind; attributesField: number }): DecodedDataPoint {
  const point: DecodedDataPoint = { attributes: {} };
  const numbers = data.kind === 'gauge' || data.kind === 'sum';
  eachField(bytes, (tag, r) => {
    if (tag.field === data.attributesField) {
      addKeyValue(point.attributes, lenField(tag, r, `${data.kind} point.attributes`));
      return true;
    }
    if (numbers && (tag.field === 4 || tag.field === 6)) {
      // NumberDataPoint: as_double = 4, as_int = 6 (sfixed64).
      expectWireType(tag, WireType.Fixed64, 'NumberDataPoint.value');
      point.value = tag.field === 4 ? r.double() : Number(int64Value(BigInt.asIntN(64, r.fixed64())));
      return true;
    }
    if (!numbers && tag.field === 4) {
      expectWireType(tag, WireType.Fixed64, `${data.kind} point.count`);
      point.count = Number(r.fixed64());
      return true;
    }
    if (!numbers && tag.field === 5) {
      expectWireType(tag, WireType.Fixed64, `${data.kind} point.sum`);
      point.value = r.double();
      return true;
    }
    return false;
  });
  return point;
}
