// Hand-written protobuf wire-format codec, just enough for the receiver:
// reading OTLP ExportTraceServiceRequest and pprof Profile bytes, and writing
// the tiny google.rpc.Status message OTLP/HTTP servers answer errors with.
// Wire format: https://protobuf.dev/programming-guides/encoding/
// A hand-rolled reader (rather than a generated one) lets the tests check the
// bytes the real exporters put on the wire without trusting their own codecs.

export const WireType = {
  Varint: 0,
  Fixed64: 1,
  Len: 2,
  StartGroup: 3,
  EndGroup: 4,
  Fixed32: 5,
} as const;

export class ProtobufError extends Error {
  override name = 'ProtobufError';
}

export interface FieldTag {
  field: number;
  wireType: number;
}

const utf8 = new TextDecoder('utf-8');

export class ProtoReader {
  private pos = 0;
  private readonly view: DataView;

  constructor(private readonly buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  get offset(): number {
    return this.pos;
  }

  /** Reads the next field tag, or undefined at the end of the message. */
  next(): FieldTag | undefined {
    if (this.done) return undefined;
    const tag = this.varintNumber();
    const field = Math.floor(tag / 8);
    const wireType = tag % 8;
    // Field 0 and wire types 6/7 do not exist; Go's decoders reject them.
    if (field === 0) throw this.error(`illegal tag 0 (wire type ${wireType})`);
    if (wireType > WireType.Fixed32) throw this.error(`illegal wire type ${wireType} for field ${field}`);
    return { field, wireType };
  }

  /** A varint as an unsigned 64-bit bigint (uint64 / raw bits of int64). */
  varint(): bigint {
    let result = 0n;
    for (let i = 0; i < 10; i++) {
      const byte = this.byte();
      result |= BigInt(byte & 0x7f) << BigInt(7 * i);
      if (byte < 0x80) return BigInt.asUintN(64, result);
    }
    throw this.error('varint longer than 10 bytes');
  }

  /** A varint known to fit in a JS number (lengths, tags, enums, small ints). */
  varintNumber(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      const byte = this.byte();
      result += (byte & 0x7f) * scale;
      if (byte < 0x80) {
        if (result > Number.MAX_SAFE_INTEGER) throw this.error('varint too large for a number');
        return result;
      }
      scale *= 128;
    }
    throw this.error('varint longer than 10 bytes');
  }

  skipVarint(): void {
    for (let i = 0; i < 10; i++) {
      if (this.byte() < 0x80) return;
    }
    throw this.error('varint longer than 10 bytes');
  }

  int64(): bigint {
    return BigInt.asIntN(64, this.varint());
  }

  /** int32/enum: proto encodes negatives as 10-byte varints; keep the low 32 bits, signed. */
  int32(): number {
    return Number(BigInt.asIntN(32, this.varint()));
  }

  uint32(): number {
    return Number(BigInt.asUintN(32, this.varint()));
  }

  bool(): boolean {
    return this.varint() !== 0n;
  }

  fixed64(): bigint {
    this.need(8);
    const value = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return value;
  }

  fixed32(): number {
    this.need(4);
    const value = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return value;
  }

  double(): number {
    this.need(8);
    const value = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return value;
  }

  bytes(): Uint8Array {
    const length = this.varintNumber();
    this.need(length);
    const out = this.buf.subarray(this.pos, this.pos + length);
    this.pos += length;
    return out;
  }

  /** Strings are decoded leniently (U+FFFD for bad UTF-8), as gogo/vtproto-generated Go decoders do not validate. */
  string(): string {
    return utf8.decode(this.bytes());
  }

  /** Skips a field's value; groups are skipped up to their matching end tag, like Go's protowire.ConsumeFieldValue. */
  skip(tag: FieldTag): void {
    switch (tag.wireType) {
      case WireType.Varint:
        this.skipVarint();
        return;
      case WireType.Fixed64:
        this.need(8);
        this.pos += 8;
        return;
      case WireType.Len: {
        const length = this.varintNumber();
        this.need(length);
        this.pos += length;
        return;
      }
      case WireType.Fixed32:
        this.need(4);
        this.pos += 4;
        return;
      case WireType.StartGroup:
        this.skipGroup(tag.field);
        return;
      default:
        throw this.error(`unexpected end-group tag for field ${tag.field}`);
    }
  }

  private skipGroup(field: number): void {
    for (;;) {
      const inner = this.next();
      if (inner === undefined) throw this.error(`unterminated group for field ${field}`);
      if (inner.wireType === WireType.EndGroup) {
        if (inner.field !== field) throw this.error(`mismatched end-group tag ${inner.field} for group ${field}`);
        return;
      }
      this.skip(inner);
    }
  }

  private byte(): number {
    const value = this.buf[this.pos];
    if (value === undefined) throw this.error('unexpected EOF');
    this.pos += 1;
    return value;
  }

  private need(length: number): void {
    if (length < 0 || this.pos + length > this.buf.length) throw this.error('unexpected EOF');
  }

  private error(message: string): ProtobufError {
    return new ProtobufError(`${message} at byte ${this.pos}`);
  }
}

/** Expects `tag` to carry `wireType`, as generated Go decoders do for known fields. */
export function expectWireType(tag: FieldTag, wireType: number, message: string): void {
  if (tag.wireType !== wireType) {
    throw new ProtobufError(`proto: wrong wireType = ${tag.wireType} for field ${tag.field} of ${message}`);
  }
}

/** Minimal writer: varint and length-delimited fields only. */
export class ProtoWriter {
  private readonly chunks: number[] = [];

  varintField(field: number, value: number): this {
    if (value === 0) return this;
    this.varint(field * 8 + WireType.Varint);
    this.varint(value);
    return this;
  }

  bytesField(field: number, bytes: Uint8Array): this {
    if (bytes.length === 0) return this;
    this.varint(field * 8 + WireType.Len);
    this.varint(bytes.length);
    for (const b of bytes) this.chunks.push(b);
    return this;
  }

  stringField(field: number, value: string): this {
    return this.bytesField(field, new TextEncoder().encode(value));
  }

  finish(): Uint8Array {
    return Uint8Array.from(this.chunks);
  }

  private varint(value: number): void {
    let rest = value;
    while (rest >= 0x80) {
      this.chunks.push((rest % 128) | 0x80);
      rest = Math.floor(rest / 128);
    }
    this.chunks.push(rest);
  }
}
