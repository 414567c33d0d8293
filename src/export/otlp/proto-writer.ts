import type { HrTime } from '@opentelemetry/api';
import { varintLength, writeVarint } from '../../util/varint.js';

/**
 * Protobuf written by hand, for the OTLP encoders (traces, profiles): a growing buffer written
 * front to back, each message's length put in front of it once known.
 */

/** Field tags (field number << 3 | wire type: 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32). */
export const tag = (field: number, wire: number) => (field << 3) | wire;

/**
 * A message in field `field`: its tag, then its length, then what `write` writes, the length put in
 * front once known (`reserve` bytes are kept for it, a guess; see Writer.end).
 */
export function nested<A, B>(w: Writer, field: number, reserve: number, a: A, b: B, write: (w: Writer, a: A, b: B) => void): void {
  w.tag(field);
  const at = w.start(reserve);
  write(w, a, b);
  w.end(at, reserve);
}

const TWO_32 = 2 ** 32;
/** Up to this many bytes, `raw` copies by hand rather than through a view. */
const SHORT_COPY = 64;
const scratch = new DataView(new ArrayBuffer(8));
const textEncoder = new TextEncoder();

/** A growing buffer written front to back; a message's length goes in front of it once it is known. */
export class Writer {
  buf: Uint8Array;
  pos = 0;

  constructor(size: number) {
    this.buf = new Uint8Array(size);
  }

  /** Tags of fields 1–15 are one byte; field 16 (span and link flags) takes two. */
  tag(value: number): void {
    if (value < 128) {
      this.ensure(1);
      this.buf[this.pos++] = value;
    } else {
      this.varint(value);
    }
  }

  /** Room for a message's length (`reserve` bytes, a guess); returns where the length goes. */
  start(reserve: number): number {
    this.ensure(reserve);
    const at = this.pos;
    this.pos += reserve;
    return at;
  }

  /** Writes the length of the message begun at `at`, moving the message if its length takes more or fewer bytes than reserved. */
  end(at: number, reserve: number): void {
    const length = this.pos - at - reserve;
    const size = varintLength(length);
    if (size !== reserve) {
      if (size > reserve) this.ensure(size - reserve);
      this.buf.copyWithin(at + size, at + reserve, this.pos);
      this.pos += size - reserve;
    }
    writeVarint(this.buf, at, length);
  }

  /** A varint, negative integers as their 64-bit two's complement (ten bytes), as int64 fields take them. */
  varint(value: number): void {
    this.ensure(10);
    if (value >= 0 && value <= Number.MAX_SAFE_INTEGER) {
      this.pos = writeVarint(this.buf, this.pos, value);
      return;
    }
    let low: number;
    let high: number;
    if (value >= 0) {
      low = value >>> 0;
      high = (value / TWO_32) >>> 0;
    } else {
      const magnitude = -value;
      low = ~(magnitude >>> 0) >>> 0;
      high = ~((magnitude / TWO_32) >>> 0) >>> 0;
      low = (low + 1) >>> 0;
      if (low === 0) high = (high + 1) >>> 0;
    }
    while (high > 0 || low > 127) {
      this.buf[this.pos++] = (low & 127) | 128;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    this.buf[this.pos++] = low;
  }

  fixed32(value: number): void {
    this.ensure(4);
    const b = this.buf;
    let p = this.pos;
    b[p++] = value;
    b[p++] = value >>> 8;
    b[p++] = value >>> 16;
    b[p++] = value >>> 24;
    this.pos = p;
  }

  /** An HrTime ([seconds, nanoseconds]) as fixed64 nanoseconds since the epoch, exact beyond 2^53. */
  time(time: HrTime): void {
    const seconds = time[0];
    // seconds × 1e9 = (upper × 1e9) × 2^16 + lower × 1e9, each product exact in a double.
    const upper = Math.floor(seconds / 65536) * 1e9;
    const lower = (seconds % 65536) * 1e9 + time[1];
    const upperHigh = Math.floor(upper / 65536);
    const low = (upper % 65536) * 65536 + lower;
    const high = upperHigh + Math.floor(low / TWO_32);
    this.fixed32(low % TWO_32);
    this.fixed32(high % TWO_32);
  }

  double(value: number): void {
    scratch.setFloat64(0, value, true);
    this.ensure(8);
    for (let i = 0; i < 8; i++) this.buf[this.pos++] = scratch.getUint8(i);
  }

  bytes(value: Uint8Array): void {
    this.varint(value.length);
    this.ensure(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  /**
   * Bytes already encoded (messages with their tags and lengths), `from` to `to` of `source`, as
   * they are: a short run copied by hand (a view to copy from would be an object of its own), a
   * longer one by the engine's copy.
   */
  raw(source: Uint8Array, from: number, to: number): void {
    this.ensure(to - from);
    const b = this.buf;
    let p = this.pos;
    if (to - from > SHORT_COPY) {
      b.set(source.subarray(from, to), p);
      p += to - from;
    } else {
      for (let i = from; i < to; i++) b[p++] = source[i]!;
    }
    this.pos = p;
  }

  /** UTF-8, written directly while the string is ASCII (nearly every attribute is). */
  string(value: string): void {
    const length = value.length;
    const lengthSize = varintLength(length);
    this.ensure(lengthSize + length);
    const b = this.buf;
    let p = this.pos + lengthSize;
    for (let i = 0; i < length; i++) {
      const c = value.charCodeAt(i);
      if (c > 127) {
        this.bytes(textEncoder.encode(value));
        return;
      }
      b[p++] = c;
    }
    writeVarint(b, this.pos, length);
    this.pos = p;
  }

  /** A trace or span ID from its hex form, as bytes (two hex digits a byte, as the SDK's hexToBinary reads them). */
  hex(value: string): void {
    const length = value.length >>> 1;
    this.varint(length);
    this.ensure(length);
    const b = this.buf;
    let p = this.pos;
    for (let i = 0; i < length; i++) b[p++] = (hexDigit(value.charCodeAt(2 * i)) << 4) | hexDigit(value.charCodeAt(2 * i + 1));
    this.pos = p;
  }

  private ensure(room: number): void {
    if (this.pos + room <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + room) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.buf.subarray(0, this.pos));
    this.buf = grown;
  }
}

/** 0–9, a–f, A–F (other characters give what the SDK's reading gives them; IDs are validated before they get here). */
function hexDigit(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  return code - 55;
}
