// Turns /ingest profile bytes into a pprof-format Profile, failing where the
// server fails. grafana/pyroscope pkg/pprof/pprof.go RawFromBytes:
// 1. gzip is detected by trying a gzip header: only a header mismatch
//    (gzip.ErrHeader) means "not gzipped"; a non-empty body shorter than the
//    10-byte header is an error (io.ErrUnexpectedEOF), as is a corrupt stream;
// 2. the bytes are unmarshalled by the generated (vtproto) decoder, which
//    rejects bad tags, truncation and a wrong wire type on a known field.
// pprof-format alone is lenient (it silently truncates and ignores some
// malformations), so the wire is first walked against the profile.proto
// schema (github.com/google/pprof proto/profile.proto) to reproduce step 2.

import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';
import { expectWireType, ProtoReader, WireType } from './protobuf.js';

export class PprofDecodeError extends Error {
  override name = 'PprofDecodeError';
}

type FieldKind = 'varint' | 'repeated-varint' | 'bytes' | Schema;
interface Schema {
  name: string;
  fields: Record<number, FieldKind>;
}

const VALUE_TYPE: Schema = { name: 'ValueType', fields: { 1: 'varint', 2: 'varint' } };
const LABEL: Schema = { name: 'Label', fields: { 1: 'varint', 2: 'varint', 3: 'varint', 4: 'varint' } };
const SAMPLE: Schema = { name: 'Sample', fields: { 1: 'repeated-varint', 2: 'repeated-varint', 3: LABEL } };
const MAPPING: Schema = {
  name: 'Mapping',
  fields: { 1: 'varint', 2: 'varint', 3: 'varint', 4: 'varint', 5: 'varint', 6: 'varint', 7: 'varint', 8: 'varint', 9: 'varint', 10: 'varint' },
};
const LINE: Schema = { name: 'Line', fields: { 1: 'varint', 2: 'varint', 3: 'varint' } };
const LOCATION: Schema = { name: 'Location', fields: { 1: 'varint', 2: 'varint', 3: 'varint', 4: LINE, 5: 'varint' } };
const FUNCTION: Schema = { name: 'Function', fields: { 1: 'varint', 2: 'varint', 3: 'varint', 4: 'varint', 5: 'varint' } };
const PROFILE: Schema = {
  name: 'Profile',
  fields: {
    1: VALUE_TYPE,
    2: SAMPLE,
    3: MAPPING,
    4: LOCATION,
    5: FUNCTION,
    6: 'bytes',
    7: 'varint',
    8: 'varint',
    9: 'varint',
    10: 'varint',
    11: VALUE_TYPE,
    12: 'varint',
    13: 'repeated-varint',
    14: 'varint',
  },
};

function validate(bytes: Uint8Array, schema: Schema): void {
  const reader = new ProtoReader(bytes);
  for (let tag = reader.next(); tag !== undefined; tag = reader.next()) {
    const kind = schema.fields[tag.field];
    const where = `${schema.name} field ${tag.field}`;
    if (kind === undefined) {
      reader.skip(tag);
    } else if (kind === 'varint') {
      expectWireType(tag, WireType.Varint, where);
      reader.skipVarint();
    } else if (kind === 'repeated-varint') {
      // Repeated scalars may arrive packed (one length-delimited run) or one per tag.
      if (tag.wireType === WireType.Len) {
        const packed = new ProtoReader(reader.bytes());
        while (!packed.done) packed.skipVarint();
      } else {
        expectWireType(tag, WireType.Varint, where);
        reader.skipVarint();
      }
    } else if (kind === 'bytes') {
      expectWireType(tag, WireType.Len, where);
      reader.bytes();
    } else {
      expectWireType(tag, WireType.Len, where);
      validate(reader.bytes(), kind);
    }
  }
}

export interface DecodedPprof {
  profile: Profile;
  gzipped: boolean;
  /** Size of the uncompressed pprof message. */
  rawSize: number;
}

function isGzipHeader(bytes: Uint8Array): boolean {
  // compress/gzip readHeader: ID1, ID2 and CM=8 (deflate).
  return bytes[0] === 0x1f && bytes[1] === 0x8b && bytes[2] === 0x08;
}

/** Decodes non-empty profile bytes; throws PprofDecodeError with a Go-like message. */
export function decodePprof(bytes: Uint8Array): DecodedPprof {
  if (bytes.length < 10) throw new PprofDecodeError('gzip reset: unexpected EOF');
  const gzipped = isGzipHeader(bytes);
  let raw = bytes;
  if (gzipped) {
    try {
      raw = gunzipSync(bytes);
    } catch (error) {
      throw new PprofDecodeError(`copy to buffer: gzip: ${(error as Error).message}`);
    }
  }
  try {
    validate(raw, PROFILE);
    return { profile: Profile.decode(raw), gzipped, rawSize: raw.length };
  } catch (error) {
    throw new PprofDecodeError((error as Error).message);
  }
}
