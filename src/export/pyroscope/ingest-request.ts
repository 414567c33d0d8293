import { basicCredential } from '../../util/basic-auth.js';
import type { Config } from '../../config/index.js';
import { INGEST_PATH, LABEL_SERVICE_NAME, MAX_LABEL_VALUE_BYTES, SPY_NAME } from '../../wire.js';
import type { Outgoing } from '../transport/outgoing.js';

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

/**
 * The service name as a `service_name` label value, for a name Pyroscope does not take as an app
 * name (`@acme/checkout`): Pyroscope 1.13 and later file the profile under the label instead, so
 * profiles and spans carry the identical name. Undefined when the app name is the name already,
 * or when the name cannot travel as a value: labelset.Parse ends a value at `,` or `}` and trims
 * surrounding spaces, and the distributor refuses values over MAX_LABEL_VALUE_BYTES.
 */
export function serviceNameLabel(serviceName: string): string | undefined {
  if (sanitizeAppName(serviceName) === serviceName) return undefined;
  if (serviceName === '' || /[,}]/.test(serviceName) || serviceName.trim() !== serviceName) return undefined;
  return Buffer.byteLength(serviceName) <= MAX_LABEL_VALUE_BYTES ? serviceName : undefined;
}

/** `exactName`: a `service_name` label value (see serviceNameLabel), sent as is. */
export function ingestName(serviceName: string, labels: Record<string, string>, exactName?: string): string {
  const pairs = Object.entries(labels)
    .filter(([key]) => /^[A-Za-z0-9_.]+$/.test(key) && !key.startsWith('__') && key !== LABEL_SERVICE_NAME)
    .map(([key, value]): [string, string] => [key, sanitizeLabelValue(value)]);
  if (exactName !== undefined) pairs.push([LABEL_SERVICE_NAME, exactName]);
  pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${sanitizeAppName(serviceName)}{${pairs.map(([key, value]) => `${key}=${value}`).join(',')}}`;
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

/**
 * The upload of one window's profile. For a service name Pyroscope only takes as a label, the
 * request carries it so, with the app-name-only form as its fallback: servers before 1.13 add
 * `service_name` themselves and refuse the duplicate with a 400.
 */
export function ingestRequest(input: IngestInput): Outgoing {
  const exactName = serviceNameLabel(input.serviceName);
  const request = ingestRequestNamed(input, ingestName(input.serviceName, input.labels, exactName));
  if (exactName === undefined) return request;
  const appName = sanitizeAppName(input.serviceName);
  return {
    ...request,
    fallback: {
      request: ingestRequestNamed(input, ingestName(input.serviceName, input.labels)),
      note: `the Pyroscope server refuses the service_name label (servers before 1.13 do), so profiles of "${input.serviceName}" are filed as "${appName}": Grafana's link from spans to profiles needs that name mapped, or a Pyroscope 1.13+`,
    },
  };
}

function ingestRequestNamed(input: IngestInput, name: string): Outgoing {
  const query = new URLSearchParams({
    name,
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
