import { nodeZlib } from './builtins.js';

/** Fastest level (zlib's Z_BEST_SPEED), as Go's runtime/pprof writes its profiles: the threadpool shares the app's CPU. */
const GZIP = { level: 1 };

/** Content-Encoding of a gzipped request body: `gzip`, the one compression OTEL_EXPORTER_OTLP_COMPRESSION names besides `none`. */
export const GZIP_CONTENT_ENCODING = 'gzip';

/** Gzips in libuv's threadpool, off the app's main thread. */
export const gzip = (data: Uint8Array): Promise<Buffer> =>
  new Promise<Buffer>((resolve, reject) => nodeZlib().gzip(data, GZIP, (error, out) => (error ? reject(error) : resolve(out))));

/** The same, synchronously: at exit, where no further turn of the event loop comes. */
export const gzipSync = (data: Uint8Array): Buffer => nodeZlib().gzipSync(data, GZIP);
