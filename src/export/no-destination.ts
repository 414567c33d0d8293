import type { Destination } from './destination.js';

/**
 * Where nothing goes: local mode whose folder could not be opened. The app runs as it would, spans
 * are still linked, and nothing is kept or sent — the user asked for a recording, not for uploads
 * to a default endpoint that then warns about a server that is not there.
 */
export const NO_DESTINATION: Destination = {
  profiles: () => undefined,
  renameService: () => undefined,
  spans: () => undefined,
  logRecords: () => undefined,
  metrics: () => undefined,
  finishAsync: () => Promise.resolve(),
  finishSync: () => undefined,
  outOfMemorySync: () => undefined,
};
