// Decodes an OTLP ExportTraceServiceRequest from protobuf bytes; the common messages' readers
// (resource, scope, attributes) serve the metrics and logs decoders too.
// Field numbers: opentelemetry-proto opentelemetry/proto/collector/trace/v1/trace_service.proto,
// trace/v1/trace.proto, common/v1/common.proto, resource/v1/resource.proto.
// Known fields must carry their declared wire type; unknown fields are skipped,
// which is what a real collector's generated decoder does.

import { expectWireType, ProtoReader, WireType, type FieldTag } from './protobuf.js';
import {
  hexOf,
  int64Value,
  type AttributeValue,
  type Attributes,
  type DecodedEvent,
  type DecodedLink,
  type DecodedScope,
  type DecodedSpan,
  type DecodedStatus,
} from './otlp-types.js';

type FieldHandler = (tag: FieldTag, reader: ProtoReader) => boolean;

/** Runs `handle` for each field; fields it does not consume (returns false) are skipped. */
export function eachField(bytes: Uint8Array, handle: FieldHandler): void {
  const reader = new ProtoReader(bytes);
  for (let tag = reader.next(); tag !== undefined; tag = reader.next()) {
    if (!handle(tag, reader)) reader.skip(tag);
  }
}

export function lenField(tag: FieldTag, reader: ProtoReader, where: string): Uint8Array {
  expectWireType(tag, WireType.Len, where);
  return reader.bytes();
}

/** The repeated fields of one signal's export request, named as in its .proto, for error messages. */
export interface SignalMessages {
  /** e.g. ExportTraceServiceRequest.resource_spans */
  resources: string;
  /** e.g. ResourceSpans.scope_spans */
  scopes: string;
  /** e.g. ScopeSpans.spans */
  items: string;
}

const messageOf = (field: string): string => field.slice(0, field.indexOf('.'));

type ItemDecoder<T> = (bytes: Uint8Array, resource: Attributes, scope: DecodedScope) => T;

/**
 * The envelope every OTLP export request shares: field 1 holds the per-resource messages, each with
 * its resource (1) and per-scope messages (2), each with its scope (1) and the items (2).
 */
export function decodeExportRequest<T>(bytes: Uint8Array, names: SignalMessages, decodeItem: ItemDecoder<T>): T[] {
  const items: T[] = [];
  eachField(bytes, (tag, r) => {
    if (tag.field !== 1) return false;
    let resource: Attributes = {};
    const scopes: Uint8Array[] = [];
    eachField(lenField(tag, r, names.resources), (inner, ir) => {
      if (inner.field === 1) resource = decodeResource(lenField(inner, ir, `${messageOf(names.scopes)}.resource`));
      else if (inner.field === 2) scopes.push(lenField(inner, ir, names.scopes));
      else return false;
      return true;
    });
    // The resource may follow the scopes on the wire, so items are built once it is known.
    for (const scopeBytes of scopes) items.push(...decodeScoped(scopeBytes, names, resource, decodeItem));
    return true;
  });
  return items;
}

function decodeScoped<T>(bytes: Uint8Array, names: SignalMessages, resource: Attributes, decodeItem: ItemDecoder<T>): T[] {
  let scope: DecodedScope = { name: '', version: '', attributes: {} };
  const itemBytes: Uint8Array[] = [];
  eachField(bytes, (tag, r) => {
    if (tag.field === 1) scope = decodeScope(lenField(tag, r, `${messageOf(names.items)}.scope`));
    else if (tag.field === 2) itemBytes.push(lenField(tag, r, names.items));
    else return false;
    return true;
  });
  return itemBytes.map((b) => decodeItem(b, resource, scope));
}

const TRACE_MESSAGES: SignalMessages = {
  resources: 'ExportTraceServiceRequest.resource_spans',
  scopes: 'ResourceSpans.scope_spans',
  items: 'ScopeSpans.spans',
};

export function decodeTraceRequestProto(bytes: Uint8Array): DecodedSpan[] {
  return decodeExportRequest(bytes, TRACE_MESSAGES, decodeSpan);
}

function decodeResource(bytes: Uint8Array): Attributes {
  const attributes: Attributes = {};
  eachField(bytes, (tag, r) => {
    if (tag.field !== 1) return false;
    addKeyValue(attributes, lenField(tag, r, 'Resource.attributes'));
    return true;
  });
  return attributes;
}

function decodeScope(bytes: Uint8Array): DecodedScope {
  const scope: DecodedScope = { name: '', version: '', attributes: {} };
  eachField(bytes, (tag, r) => {
    switch (tag.field) {
      case 1:
        expectWireType(tag, WireType.Len, 'InstrumentationScope.name');
        scope.name = r.string();
        return true;
      case 2:
        expectWireType(tag, WireType.Len, 'InstrumentationScope.version');
        scope.version = r.string();
        return true;
      case 3:
        addKeyValue(scope.attributes, lenField(tag, r, 'InstrumentationScope.attributes'));
        return true;
      default:
        return false;
    }
  });
  return scope;
}

function decodeSpan(bytes: Uint8Array, resource: Attributes, scope: DecodedScope): DecodedSpan {
  const span: DecodedSpan = {
    traceId: '',
    spanId: '',
    parentSpanId: '',
    traceState: '',
    flags: 0,
    name: '',
    kind: 0,
    startTimeUnixNano: 0n,
    endTimeUnixNano: 0n,
    attributes: {},
    events: [],
    links: [],
    status: { code: 0, message: '' },
    resource,
    scope,
  };
  eachField(bytes, (tag, r) => {
    switch (tag.field) {
      case 1:
        span.traceId = hexOf(lenField(tag, r, 'Span.trace_id'));
        return true;
      case 2:
        span.spanId = hexOf(lenField(tag, r, 'Span.span_id'));
        return true;
      case 3:
        expectWireType(tag, WireType.Len, 'Span.trace_state');
        span.traceState = r.string();
        return true;
      case 4:
        span.parentSpanId = hexOf(lenField(tag, r, 'Span.parent_span_id'));
        return true;
      case 5:
        expectWireType(tag, WireType.Len, 'Span.name');
        span.name = r.string();
        return true;
      case 6:
        expectWireType(tag, WireType.Varint, 'Span.kind');
        span.kind = r.int32();
        return true;
      case 7:
        expectWireType(tag, WireType.Fixed64, 'Span.start_time_unix_nano');
        span.startTimeUnixNano = r.fixed64();
        return true;
      case 8:
        expectWireType(tag, WireType.Fixed64, 'Span.end_time_unix_nano');
        span.endTimeUnixNano = r.fixed64();
        return true;
      case 9:
        addKeyValue(span.attributes, lenField(tag, r, 'Span.attributes'));
        return true;
      case 11:
        span.events.push(decodeEvent(lenField(tag, r, 'Span.events')));
        return true;
      case 13:
        span.links.push(decodeLink(lenField(tag, r, 'Span.links')));
        return true;
      case 15:
        span.status = decodeStatus(lenField(tag, r, 'Span.status'));
        return true;
      case 16:
        expectWireType(tag, WireType.Fixed32, 'Span.flags');
        span.flags = r.fixed32();
        return true;
      default:
        return false;
    }
  });
  return span;
}

function decodeEvent(bytes: Uint8Array): DecodedEvent {
  const event: DecodedEvent = { name: '', timeUnixNano: 0n, attributes: {} };
  eachField(bytes, (tag, r) => {
    switch (tag.field) {
      case 1:
        expectWireType(tag, WireType.Fixed64, 'Span.Event.time_unix_nano');
        event.timeUnixNano = r.fixed64();
        return true;
      case 2:
        expectWireType(tag, WireType.Len, 'Span.Event.name');
        event.name = r.string();
        return true;
      case 3:
        addKeyValue(event.attributes, lenField(tag, r, 'Span.Event.attributes'));
        return true;
      default:
        return false;
    }
  });
  return event;
}

function decodeLink(bytes: Uint8Array): DecodedLink {
  const link: DecodedLink = { traceId: '', spanId: '', traceState: '', attributes: {} };
  eachField(bytes, (tag, r) => {
    switch (tag.field) {
      case 1:
        link.traceId = hexOf(lenField(tag, r, 'Span.Link.trace_id'));
        return true;
      case 2:
        link.spanId = hexOf(lenField(tag, r, 'Span.Link.span_id'));
        return true;
      case 3:
        expectWireType(tag, WireType.Len, 'Span.Link.trace_state');
        link.traceState = r.string();
        return true;
      case 4:
        addKeyValue(link.attributes, lenField(tag, r, 'Span.Link.attributes'));
        return true;
      default:
        return false;
    }
  });
  return link;
}

function decodeStatus(bytes: Uint8Array): DecodedStatus {
  const status: DecodedStatus = { code: 0, message: '' };
  eachField(bytes, (tag, r) => {
    switch (tag.field) {
      case 2:
        expectWireType(tag, WireType.Len, 'Status.message');
        status.message = r.string();
        return true;
      case 3:
        expectWireType(tag, WireType.Varint, 'Status.code');
        status.code = r.int32();
        return true;
      default:
        return false;
    }
  });
  return status;
}

export function addKeyValue(target: Attributes, bytes: Uint8Array): void {
  let key = '';
  let value: AttributeValue = null;
  eachField(bytes, (tag, r) => {
    switch (tag.field) {
      case 1:
        expectWireType(tag, WireType.Len, 'KeyValue.key');
        key = r.string();
        return true;
      case 2:
        value = decodeAnyValue(lenField(tag, r, 'KeyValue.value'));
        return true;
      default:
        return false;
    }
  });
  target[key] = value;
}

export function decodeAnyValue(bytes: Uint8Array): AttributeValue {
  let value: AttributeValue = null;
  eachField(bytes, (tag, r) => {
    switch (tag.field) {
      case 1:
        expectWireType(tag, WireType.Len, 'AnyValue.string_value');
        value = r.string();
        return true;
      case 2:
        expectWireType(tag, WireType.Varint, 'AnyValue.bool_value');
        value = r.bool();
        return true;
      case 3:
        expectWireType(tag, WireType.Varint, 'AnyValue.int_value');
        value = int64Value(r.int64());
        return true;
      case 4:
        expectWireType(tag, WireType.Fixed64, 'AnyValue.double_value');
        value = r.double();
        return true;
      case 5:
        value = decodeArrayValue(lenField(tag, r, 'AnyValue.array_value'));
        return true;
      case 6: {
        const kvlist: Attributes = {};
        eachField(lenField(tag, r, 'AnyValue.kvlist_value'), (inner, ir) => {
          if (inner.field !== 1) return false;
          addKeyValue(kvlist, lenField(inner, ir, 'KeyValueList.values'));
          return true;
        });
        value = kvlist;
        return true;
      }
      case 7:
        value = Uint8Array.from(lenField(tag, r, 'AnyValue.bytes_value'));
        return true;
      default:
        return false;
    }
  });
  return value;
}

function decodeArrayValue(bytes: Uint8Array): AttributeValue[] {
  const values: AttributeValue[] = [];
  eachField(bytes, (tag, r) => {
    if (tag.field !== 1) return false;
    values.push(decodeAnyValue(lenField(tag, r, 'ArrayValue.values')));
    return true;
  });
  return values;
}
