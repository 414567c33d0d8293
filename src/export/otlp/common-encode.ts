import type { Attributes } from '@opentelemetry/api';
import { nested, tag, type Writer } from './proto-writer.js';

/** common/v1/common.proto's KeyValue and AnyValue, as @opentelemetry/otlp-transformer writes them. */

const KEY_VALUE_KEY = tag(1, 2);
const KEY_VALUE_VALUE = tag(2, 2);
const ANY_STRING = tag(1, 2);
const ANY_BOOL = tag(2, 0);
const ANY_INT = tag(3, 0);
const ANY_DOUBLE = tag(4, 1);
const ANY_ARRAY = tag(5, 2);
const ANY_KVLIST = tag(6, 2);
const ANY_BYTES = tag(7, 2);
const ARRAY_VALUES = tag(1, 2);
const KVLIST_VALUES = tag(1, 2);

const hasOwn = Object.prototype.hasOwnProperty;

/** Repeated KeyValue under `field` (an object's own enumerable properties, as the SDK's serializer takes them). */
export function attributes(w: Writer, attrs: Attributes | Record<string, unknown>, field: number): void {
  for (const key in attrs) {
    if (hasOwn.call(attrs, key)) nested(w, field, 1, key, (attrs as Record<string, unknown>)[key], keyValue);
  }
}

function keyValue(w: Writer, key: string, value: unknown): void {
  w.tag(KEY_VALUE_KEY);
  w.string(key);
  nested(w, KEY_VALUE_VALUE, 1, value, undefined, anyValue);
}

const MIN_INT64 = -(2 ** 63);
const MAX_INT64_EXCLUSIVE = 2 ** 63;

/** AnyValue's fields as the SDK's serializer picks them; anything else (null, undefined, bigint) is an empty AnyValue. */
function anyValue(w: Writer, value: unknown): void {
  const type = typeof value;
  if (type === 'string') {
    w.tag(ANY_STRING);
    w.string(value as string);
  } else if (type === 'boolean') {
    w.tag(ANY_BOOL);
    w.varint(value ? 1 : 0);
  } else if (type === 'number') {
    const n = value as number;
    if (Number.isInteger(n) && n >= MIN_INT64 && n < MAX_INT64_EXCLUSIVE) {
      w.tag(ANY_INT);
      w.varint(n);
    } else {
      w.tag(ANY_DOUBLE);
      w.double(n);
    }
  } else if (value instanceof Uint8Array) {
    w.tag(ANY_BYTES);
    w.bytes(value);
  } else if (Array.isArray(value)) {
    nested(w, ANY_ARRAY, 1, value, undefined, arrayValue);
  } else if (type === 'object' && value != null) {
    nested(w, ANY_KVLIST, 1, value as Record<string, unknown>, KVLIST_VALUES, attributes);
  }
}

function arrayValue(w: Writer, items: unknown[]): void {
  for (const item of items) nested(w, ARRAY_VALUES, 1, item, undefined, anyValue);
}
