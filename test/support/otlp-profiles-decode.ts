// Decodes an OTLP ExportProfilesServiceRequest (opentelemetry-proto v1.10.0) with protobufjs from
// the schema in test/fixtures/otlp-profiles/ — a decoder that shares no code with pyro-run's
// encoder — into plain objects: 64-bit integers as numbers, bytes as Buffers, every field present
// (proto3 defaults filled in), so tests can check each index against its table.

import protobuf from 'protobufjs';
import { fixture } from './child.js';

export interface DecodedValueType {
  typeStrindex: number;
  unitStrindex: number;
}

export interface DecodedSample {
  stackIndex: number;
  attributeIndices: number[];
  linkIndex: number;
  values: number[];
  timestampsUnixNano: number[];
}

export interface DecodedProfile {
  sampleType: DecodedValueType | null;
  samples: DecodedSample[];
  timeUnixNano: number;
  durationNano: number;
  periodType: DecodedValueType | null;
  period: number;
  attributeIndices: number[];
}

export interface DecodedAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number;
  doubleValue?: number;
  arrayValue?: { values: DecodedAnyValue[] };
  kvlistValue?: { values: DecodedKeyValue[] };
  bytesValue?: Buffer;
  stringValueStrindex?: number;
}

export interface DecodedKeyValue {
  key: string;
  value: DecodedAnyValue | null;
  keyStrindex: number;
}

export interface DecodedDictionary {
  mappingTable: { memoryStart: number; memoryLimit: number; fileOffset: number; filenameStrindex: number; attributeIndices: number[] }[];
  locationTable: { mappingIndex: number; address: number; lines: { functionIndex: number; line: number; column: number }[]; attributeIndices: number[] }[];
  functionTable: { nameStrindex: number; systemNameStrindex: number; filenameStrindex: number; startLine: number }[];
  linkTable: { traceId: Buffer; spanId: Buffer }[];
  stringTable: string[];
  attributeTable: { keyStrindex: number; value: DecodedAnyValue | null; unitStrindex: number }[];
  stackTable: { locationIndices: number[] }[];
}

export interface DecodedProfilesRequest {
  resourceProfiles: {
    resource: { attributes: DecodedKeyValue[] } | null;
    scopeProfiles: { scope: { name: string; version: string; attributes: DecodedKeyValue[] } | null; profiles: DecodedProfile[] }[];
  }[];
  dictionary: DecodedDictionary | null;
}

let requestType: protobuf.Type | undefined;

function schema(): protobuf.Type {
  requestType ??= protobuf
    .loadSync(fixture('otlp-profiles/profiles-v1.10.proto'))
    .lookupType('opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest');
  return requestType;
}

export function decodeProfilesRequest(body: Uint8Array): DecodedProfilesRequest {
  const type = schema();
  const message = type.decode(body);
  const decoded = type.toObject(message, { longs: Number, defaults: true, arrays: true }) as DecodedProfilesRequest;
  // protobufjs hands bytes over as Uint8Array here; the IDs read as Buffers (hex).
  for (const link of decoded.dictionary?.linkTable ?? []) {
    link.traceId = Buffer.from(link.traceId);
    link.spanId = Buffer.from(link.spanId);
  }
  return decoded;
}
