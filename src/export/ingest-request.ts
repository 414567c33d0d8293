import { basicCredential } from '../basic-auth.js';
import type { Config } from '../config.js';
import { INGEST_PATH, SPY_NAME } from '../wire.js';
import type { Outgoing } from './outgoing.js';

/**
 * Pure: builds the Pyroscope `/ingest` request for one encoded pprof
 * (grafana/pyroscope pkg/ingester/pyroscope/ingest_handler.go). The raw-body form with
 * `format=pprof` is used; the server detects gzip itself.
 */

/** Longest label value we send; longer ones would only bloat every series key. */
const MAX_VALUE_LENGTH = 256;

/**
 * The server parses `name` with api/model/labelset (split at `{`, `=`, `,`, `}`) and allows only
 * `[A-Za-z0-9_./-]` in a service name (labelset/validate.go): anything else is replaced, so an
 * upload is never rejected for its name.
 */
export function sanitizeAppName(name: string): string {
  const cleaned = truncate(name.replace(/[^A-Za-z0-9._\-/]/g, '_'));
  return cleaned === '' ? 'unknown_service' : cleaned;
}

/** Cut by code points, not UTF-16 units: half a surrogate pair would arrive as U+FFFD. */
function truncate(value: string): string {
  return value.length <= MAX_VALUE_LENGTH ? value : Array.from(value).slice(0, MAX_VALUE_LENGTH).join('');
}

export function sanitizeLabelValue(value: string): string {
  return truncate(value.replace(/[{}=,\s"\\]/g, '_'));
}

export function ingestName(serviceName: string, labels: Record<string, string>): string {
  const pairs = Object.entries(labels)
    .filter(([key]) => /^[A-Za-z0-9_.]+$/.test(key) && !key.startsWith('__'))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${sanitizeLabelValue(value)}`);
  return `${sanitizeAppName(serviceName)}{${pairs.join(',')}}`;
}

export function authHeaders(pyroscope: Config['pyroscope']): Record<string, string> {
  const headers: Record<string, string> = { ...pyroscope.headers };
  if (pyroscope.authToken !== undefined) {
    headers.authorization = `Bearer ${pyroscope.authToken}`;
  } else if (pyroscope.basicAuthUser !== undefined && pyroscope.basicAuthPassword !== undefined) {
    headers.authorization = `Basic ${basicCredential(pyroscope.basicAuthUser, pyroscope.basicAuthPassword)}`;
  }
  if (pyroscope.tenantId !== undefined) headers['x-scope-orgid'] = pyroscope.tenantId;
  return headers;
}

export interface IngestInput {
  serverAddress: string;
  serviceName: string;
  labels: Record<string, string>;
  headers: Record<string, string>;
  /** Window bounds, epoch milliseconds. */
  from: number;
  until: number;
  /** gzipped pprof. */
  body: Uint8Array;
  what: string;
}

export function ingestRequest(input: IngestInput): Outgoing {
  const query = new URLSearchParams({
    name: ingestName(input.serviceName, input.labels),
    // Epoch milliseconds: the server reads 13-digit values as ms (pkg/og/util/attime).
    from: String(Math.floor(input.from)),
    until: String(Math.ceil(input.until)),
    spyName: SPY_NAME,
    format: 'pprof',
  });
  return {
    kind: 'profiles',
    url: `${input.serverAddress}${INGEST_PATH}?${query.toString()}`,
    headers: { 'content-type': 'application/octet-stream', ...input.headers },
    body: input.body,
    what: input.what,
  };
}
