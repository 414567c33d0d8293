import { randomHex } from '../util/random.js';

/** W3C trace context: an id of all zeros is invalid (https://www.w3.org/TR/trace-context/#trace-id). */
const ALL_ZEROS = /^0+$/;

function nonZeroHex(bytes: number): string {
  let id = randomHex(bytes);
  while (ALL_ZEROS.test(id)) id = randomHex(bytes);
  return id;
}

/**
 * Trace and span ids for pyro-run's tracer provider, in place of the SDK's RandomIdGenerator,
 * which draws them from Math.random (sdk-trace, platform/node/RandomIdGenerator): see util/random.ts.
 */
export const idGenerator = {
  generateTraceId: (): string => nonZeroHex(16),
  generateSpanId: (): string => nonZeroHex(8),
};
