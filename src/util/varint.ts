/** Protobuf's base-128 varints for non-negative safe integers: the pprof and OTLP encoders' shared part. */

/** Bytes `value` takes as a varint. */
export function varintLength(value: number): number {
  let length = 1;
  for (let rest = value; rest >= 128; rest = Math.floor(rest / 128)) length++;
  return length;
}

/** Writes `value` at `at`; returns the position after it. */
export function writeVarint(out: Uint8Array, at: number, value: number): number {
  if (value < 2 ** 32) {
    // Most values (lengths, tags, IDs, counts): 32-bit shifts instead of double division.
    let rest = value >>> 0;
    while (rest > 127) {
      out[at++] = (rest & 127) | 128;
      rest >>>= 7;
    }
    out[at++] = rest;
    return at;
  }
  let rest = value;
  while (rest >= 128) {
    out[at++] = (rest % 128) | 128;
    rest = Math.floor(rest / 128);
  }
  out[at++] = rest;
  return at;
}
