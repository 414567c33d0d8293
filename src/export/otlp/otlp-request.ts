import type { Outgoing } from '../transport/outgoing.js';
import { GZIP_CONTENT_ENCODING } from '../../util/gzip.js';

/** Default OTLP/HTTP traces URL (OTel spec: http://localhost:4318 + /v1/traces). */
export const DEFAULT_TRACES_URL = 'http://localhost:4318/v1/traces';

/**
 * Most bytes of one OTLP export request (spans, log records). What receivers take varies: the
 * collector's OTLP/HTTP server 20 MiB (confighttp max_request_body_size), OTLP/gRPC receivers
 * 4 MiB (gRPC's default message limit), and a proxy in front often 1 MiB (nginx's and
 * ingress-nginx's default body size). An ordinary batch (512 spans of a few hundred bytes) is far
 * below it; a batch that a few huge items make larger is split, so a refusal costs only the items
 * of the request that is too large, and an item over the bound on its own goes alone.
 */
export const MAX_OTLP_REQUEST_BYTES = 1024 * 1024;

export const PROTOBUF_CONTENT_TYPE = 'application/x-protobuf';
export const JSON_CONTENT_TYPE = 'application/json';

/**
 * One OTLP export request per batch (spans, log records), unless it would exceed `maxBytes`:
 * then it halves until the pieces fit, an item over the bound on its own going alone (`split`).
 */
export function requestsWithin<T>(
  serialize: (items: T[]) => Uint8Array | undefined,
  request: (items: T[], body: Uint8Array) => Outgoing,
  maxBytes: number,
): { build(items: T[]): Outgoing[] } {
  /** Requests for `items`, each within maxBytes or of one item: halves until they fit. */
  const within = (items: T[]): Outgoing[] => {
    const body = serialize(items);
    if (body === undefined) return [];
    if (body.length <= maxBytes || items.length === 1) return [request(items, body)];
    const half = Math.ceil(items.length / 2);
    return [...within(items.slice(0, half)), ...within(items.slice(half))];
  };
  /**
   * A batch over the bound: each item over it on its own goes alone, and first — it is the one a
   * receiver may refuse, and should the queue overflow, the oldest requests are the ones dropped;
   * the others are packed, in order, into as few requests as fit (sized by encoding each alone,
   * which overcounts the shared resource and scope a little).
   */
  const split = (items: T[]): Outgoing[] => {
    const alone: T[][] = [];
    const packed: T[][] = [];
    let group: T[] = [];
    let groupBytes = 0;
    for (const item of items) {
      const size = serialize([item])?.length ?? 0;
      if (size > maxBytes) {
        alone.push([item]);
        continue;
      }
      if (group.length > 0 && groupBytes + size > maxBytes) {
        packed.push(group);
        group = [];
        groupBytes = 0;
      }
      group.push(item);
      groupBytes += size;
    }
    if (group.length > 0) packed.push(group);
    return [...alone, ...packed].flatMap(within);
  };
  const fromBody = (items: T[], body: Uint8Array | undefined): Outgoing[] => {
    if (body === undefined) return [];
    return body.length <= maxBytes || items.length === 1 ? [request(items, body)] : split(items);
  };
  return { build: (items) => fromBody(items, serialize(items)) };
}

/** The request with `body`, its gzip of the request's own body, marked as such. */
export const gzipped = (request: Outgoing, body: Uint8Array): Outgoing => ({
  ...request,
  body,
  headers: { ...request.headers, 'content-encoding': GZIP_CONTENT_ENCODING },
});

/** `3 spans`, `1 log record`. */
export function countText(count: number, noun: string): string {
  return `${count} ${count === 1 ? noun : `${noun}s`}`;
}

export function sizeText(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`;
}
