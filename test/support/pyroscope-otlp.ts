// Grafana Pyroscope's OTLP profiles ingest (POST /v1development/profiles), as its code does it at
// grafana/pyroscope 3fe6a457 (2026-08-21; built against opentelemetry-proto v1.10.0):
// - pkg/ingester/otlp/ingest_handler.go: Content-Type exactly application/x-protobuf,
//   application/protobuf or application/json (else 415); Content-Encoding gzip; an unparsable body
//   is 400; a request without dictionary or resource profiles, and any conversion error, comes back
//   as gRPC InvalidArgument, which over HTTP is a 500 ("rpc error: code = InvalidArgument desc =
//   …"); success is 200 with an empty protobuf body. Series labels: __delta__=false,
//   __otel__=true, __name__, every resource then scope attribute with a string or int value
//   (first wins), then service_name (the resource's service.name, else unknown_service).
// - pkg/ingester/otlp/convert.go ConvertOtelToGoogle: per Profile, `samples/count` with a
//   `cpu/nanoseconds` period becomes cpu/nanoseconds named process_cpu, each value × period; any
//   other type is named by its period type; every table index is checked against its table
//   ("index N out of bounds"); a sample's link (link_index ≠ 0) becomes span_id (hex) and, when 16
//   bytes, trace_id; its string attributes become labels (service.name aside).
// - the distributor (pkg/validation): an empty metric name, more than 30 series labels, a
//   duplicate label name or a converted profile of more than 16 000 samples (ValidateProfile) is
//   400; samples with a zero or negative value are dropped.
// Only the protobuf form is taken here: pyro-run sends nothing else.

import { gunzipSync } from 'node:zlib';
import { header, type ReceivedRequest, type Reply } from './exchange.js';
import {
  type DecodedAnyValue,
  type DecodedDictionary,
  type DecodedKeyValue,
  type DecodedProfile,
  type DecodedProfilesRequest,
  decodeProfilesRequest,
} from './otlp-profiles-decode.js';
import { isValidSpanId, isValidTraceId, type SampleView } from './pprof-helpers.js';
import { MAX_PROFILE_STACKTRACE_SAMPLES } from './pyroscope-limits.js';
import type { OtlpProfileRecord } from './receiver-types.js';

const PROTOBUF_TYPES = new Set(['application/x-protobuf', 'application/protobuf']);
const MAX_SERIES_LABELS = 30;
const DEFAULT_DURATION_NANOS = 10_000_000_000;

class ConvertError extends Error {}

function at<T>(table: readonly T[], index: number): T {
  if (index < 0 || index >= table.length) throw new ConvertError(`index ${index} out of bounds`);
  return table[index] as T;
}

/** stringValueFromAnyValue: strings as they are, ints in decimal, a one-element array of either; else '' (dropped). */
function labelValue(value: DecodedAnyValue | null | undefined): string {
  if (value == null) return '';
  if (typeof value.stringValue === 'string' && value.stringValue !== '') return value.stringValue;
  if (typeof value.intValue === 'number' && value.stringValue === undefined) return String(value.intValue);
  const items = value.arrayValue?.values ?? [];
  return items.length === 1 ? labelValue(items[0]) : '';
}

function appendAttributes(labels: [string, string][], seen: Set<string>, attributes: readonly DecodedKeyValue[]): void {
  for (const { key, value } of attributes) {
    const text = labelValue(value);
    if (text === '' || seen.has(key)) continue;
    seen.add(key);
    labels.push([key, text]);
  }
}

interface Converted {
  name: string;
  sampleType: { type: string; unit: string };
  periodType: { type: string; unit: string } | undefined;
  timeNanos: number;
  durationNanos: number;
  period: number;
  samples: SampleView[];
}

/** ConvertOtelToGoogle for a Profile without sample-level service.name (pyro-run sets none). */
function convert(profile: DecodedProfile, dict: DecodedDictionary, now: number): Converted | undefined {
  if (profile.samples.length === 0) return undefined;
  const text = (index: number) => at(dict.stringTable, index);
  if (profile.sampleType == null) throw new ConvertError('sample type is missing');
  let sampleType = { type: text(profile.sampleType.typeStrindex), unit: text(profile.sampleType.unitStrindex) };
  const hasPeriod = profile.periodType != null && profile.period !== 0;
  const periodType = profile.periodType == null ? undefined : { type: text(profile.periodType.typeStrindex), unit: text(profile.periodType.unitStrindex) };
  const pt = `${sampleType.type}:${sampleType.unit}:${hasPeriod ? periodType!.type : ''}:${hasPeriod ? periodType!.unit : ''}`;
  let name: string;
  let samplesToNanos = false;
  if (pt === 'samples:count:cpu:nanoseconds') {
    sampleType = { type: 'cpu', unit: 'nanoseconds' };
    name = 'process_cpu';
    samplesToNanos = true;
  } else {
    name = pt.split(':')[2] ?? '';
  }
  const samples: SampleView[] = [];
  for (const sample of profile.samples) {
    let values = [...sample.values];
    if (values.length === 0 && sample.timestampsUnixNano.length > 0) values = [sample.timestampsUnixNano.length];
    if (values.length === 0) throw new ConvertError('sample value is required');
    if (samplesToNanos) values[0] = (values[0] as number) * profile.period;
    if (hasPeriod && values.length !== 1) throw new ConvertError(`sample values length mismatch ${values.length} 1`);
    const labels: Record<string, string> = {};
    sample.attributeIndices.forEach((index) => {
      const attribute = at(dict.attributeTable, index);
      const key = text(attribute.keyStrindex);
      if (key === 'service.name') return;
      const value = labelValue(attribute.value);
      if (value !== '') labels[key] = value;
    });
    if (sample.linkIndex !== 0) {
      const link = at(dict.linkTable, sample.linkIndex);
      labels.span_id = link.spanId.toString('hex');
      if (link.traceId.length === 16) labels.trace_id = link.traceId.toString('hex');
    }
    if (sample.stackIndex < 0 || sample.stackIndex >= dict.stackTable.length) throw new ConvertError(`invalid stack index: ${sample.stackIndex}`);
    const stack: string[] = [];
    for (const locationIndex of at(dict.stackTable, sample.stackIndex).locationIndices) {
      const location = at(dict.locationTable, locationIndex);
      at(dict.mappingTable, location.mappingIndex);
      for (const line of location.lines) stack.push(text(at(dict.functionTable, line.functionIndex).nameStrindex));
    }
    // Normalize: an empty label goes, and so does a sample with a zero or negative value.
    for (const [key, value] of Object.entries(labels)) if (value === '') delete labels[key];
    if (values.some((value) => value <= 0)) continue;
    const spanId = labels.span_id !== undefined && isValidSpanId(labels.span_id) ? labels.span_id : undefined;
    const traceId = labels.trace_id !== undefined && isValidTraceId(labels.trace_id) ? labels.trace_id : undefined;
    samples.push({ stack, labels, values: { [sampleType.type]: values[0] as number }, spanId, traceId });
  }
  return {
    name,
    sampleType,
    periodType,
    timeNanos: profile.timeUnixNano === 0 ? now * 1e6 : profile.timeUnixNano,
    durationNanos: profile.durationNano === 0 ? DEFAULT_DURATION_NANOS : profile.durationNano,
    period: profile.period,
    samples,
  };
}

function serviceNameOf(attributes: readonly DecodedKeyValue[]): string {
  for (const { key, value } of attributes) {
    if (key === 'service.name' && labelValue(value) !== '') return labelValue(value);
  }
  return 'unknown_service';
}

const textReply = (status: number, message: string): Reply => ({
  status,
  headers: { 'content-type': 'text/plain; charset=utf-8' },
  body: `${message}\n`,
  error: message,
});
const invalidArgument = (message: string): Reply => textReply(500, `rpc error: code = InvalidArgument desc = ${message}`);

export type OtlpProfilesResult = { reply: Reply; records: OtlpProfileRecord[] };

/** The series a request becomes, or the reply Pyroscope would refuse it with. */
export function convertRequest(request: DecodedProfilesRequest, received: { receivedAt: number; headers: ReceivedRequest['headers'] }): OtlpProfilesResult {
  if (request.dictionary == null) return { reply: invalidArgument('missing profile metadata dictionary'), records: [] };
  if (request.resourceProfiles.length === 0) return { reply: invalidArgument('missing resource profiles'), records: [] };
  const records: OtlpProfileRecord[] = [];
  for (const rp of request.resourceProfiles) {
    const resourceAttributes = rp.resource?.attributes ?? [];
    const serviceName = serviceNameOf(resourceAttributes);
    for (const sp of rp.scopeProfiles) {
      for (const profile of sp.profiles) {
        let converted: Converted | undefined;
        try {
          converted = convert(profile, request.dictionary, received.receivedAt);
        } catch (error) {
          return { reply: invalidArgument(`failed to convert otel profile: ${(error as Error).message}`), records: [] };
        }
        if (converted === undefined) continue;
        const labels: [string, string][] = [
          ['__delta__', 'false'],
          ['__otel__', 'true'],
          ['__name__', converted.name],
        ];
        const seen = new Set(['__name__']);
        appendAttributes(labels, seen, resourceAttributes);
        appendAttributes(labels, seen, sp.scope?.attributes ?? []);
        labels.push(['service_name', serviceName]);
        const names = labels.map(([key]) => key);
        if (converted.name === '') return { reply: textReply(400, 'invalid labels: invalid metric name'), records: [] };
        if (names.length > MAX_SERIES_LABELS)
          return { reply: textReply(400, `profile series has ${names.length} label names, more than ${MAX_SERIES_LABELS}`), records: [] };
        const duplicate = names.find((name, i) => names.indexOf(name) !== i);
        if (duplicate !== undefined) return { reply: textReply(400, `duplicate label name: ${duplicate}`), records: [] };
        if (converted.samples.length > MAX_PROFILE_STACKTRACE_SAMPLES) {
          return {
            reply: textReply(
              400,
              `the profile exceeds the samples count limit (max_profile_stacktrace_samples, actual: ${converted.samples.length}, limit: ${MAX_PROFILE_STACKTRACE_SAMPLES})`,
            ),
            records: [],
          };
        }
        const { sampleType, periodType } = converted;
        records.push({
          receivedAt: received.receivedAt,
          headers: received.headers,
          seriesLabels: Object.fromEntries(labels),
          serviceName,
          metricName: converted.name,
          profileTypeId: `${converted.name}:${sampleType.type}:${sampleType.unit}:${periodType?.type ?? ''}:${periodType?.unit ?? ''}`,
          timeNanos: converted.timeNanos,
          durationNanos: converted.durationNanos,
          period: converted.period,
          samples: converted.samples,
        });
      }
    }
  }
  return { reply: { status: 200, headers: { 'content-type': 'application/x-protobuf' }, body: new Uint8Array() }, records };
}

/** POST /v1development/profiles, as Pyroscope answers it. */
export function handleOtlpProfiles(request: ReceivedRequest): OtlpProfilesResult {
  const contentType = header(request, 'content-type');
  if (!PROTOBUF_TYPES.has(contentType)) return { reply: textReply(415, `Unsupported Content-Type: ${contentType}`), records: [] };
  let body: Buffer = request.body;
  if (header(request, 'content-encoding').toLowerCase() === 'gzip') {
    try {
      body = gunzipSync(body);
    } catch {
      return { reply: textReply(400, 'failed to read gzip-compressed request body'), records: [] };
    }
  }
  let decoded: DecodedProfilesRequest;
  try {
    decoded = decodeProfilesRequest(body);
  } catch {
    return { reply: textReply(400, 'Failed to parse protobuf request'), records: [] };
  }
  return convertRequest(decoded, request);
}
