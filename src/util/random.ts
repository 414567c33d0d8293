/**
 * pyro-run's random numbers, from the operating system's generator (crypto), never from
 * `Math.random`: an app, or its tests, may seed that (seedrandom replaces it) and count on its
 * sequence; every number the agent took from it — a span's id, a retry's jitter — would shift the
 * app's. Bytes are drawn a pool at a time, so a span id costs a slice of a buffer, not a system call.
 */
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

function take(bytes: number): number {
  if (offset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const at = offset;
  offset += bytes;
  return at;
}

/** `bytes` random bytes as lowercase hex. */
export function randomHex(bytes: number): string {
  const at = take(bytes);
  return pool.toString('hex', at, at + bytes);
}

/** A number in [0, 1), as Math.random gives. */
export function randomFraction(): number {
  const at = take(4);
  return pool.readUInt32BE(at) / 2 ** 32;
}
