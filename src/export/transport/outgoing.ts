import { basicCredential, urlCredentials } from '../../util/basic-auth.js';
import type { OriginTls } from './origin-tls.js';
import { type ProxySettings, proxyFor } from '../../config/proxy.js';

/**
 * One HTTP request we owe a backend: a profile upload, a span, log or metrics batch. Built once, sent by the
 * steady-state sender or, at exit, by the synchronous final flush: both send the same thing.
 */
export interface Outgoing {
  /** Which pipeline it belongs to; failure warnings are keyed by it. */
  kind: 'profiles' | 'spans' | 'logs' | 'metrics';
  url: string;
  headers: Record<string, string>;
  body: Uint8Array;
  /** How long one attempt may take, from connecting to the reply's status line; the sender's own timeout when not set. */
  timeoutMs?: number;
  /** Short human text for logs, e.g. `cpu profile 12:00:00–12:00:15`. Never holds secrets. */
  what: string;
  /**
   * The same upload in a form older servers take, for when this one is refused (400): tried at
   * once, and once it was taken where this form was not, its pipeline sends fallback forms from
   * then on, with `note` said once.
   */
  fallback?: { request: Outgoing; note: string };
}

/** The endpoint of a request without query string or credentials: safe to print. */
export function endpointOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(invalid url)';
  }
}

/** Where a request goes, safe to print: its endpoint, and the proxy it goes through (with the variable that set it), if any. */
export function routeOf(url: string, proxy: ProxySettings | undefined): string {
  const via = proxyFor(url, proxy);
  return via === undefined ? endpointOf(url) : `${endpointOf(url)} through proxy ${via.url} (${via.env})`;
}

/** Retry-After as milliseconds (delta-seconds or HTTP date), capped; undefined when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now: number, capMs: number): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  const seconds = Number(text);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(text) - now;
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(Math.max(ms, 0), capMs);
}

/** Statuses worth another try: overload and server faults (as the OTLP spec and Pyroscope SDKs treat them). */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status === 502 || status === 503 || status === 504 || status === 500;
}

/** How our requests reach the backends, the same for the steady-state sender and the final flush. */
export interface Transport {
  /** Connect timeout (DNS lookup, TCP and TLS handshakes included). */
  timeoutMs: number;
  /** Accept any TLS certificate (PYRO_RUN_INSECURE_SKIP_TLS_VERIFY). */
  tlsSkipVerify: boolean;
  /** HTTP_PROXY, HTTPS_PROXY and NO_PROXY as read at start (proxy.ts); undefined = every request goes direct. */
  proxy: ProxySettings | undefined;
  /** A CA and a client certificate for particular origins (the OTLP endpoints' files, origin-tls.ts). */
  originTls: OriginTls[];
}

/**
 * URL and headers as they go on the wire. Credentials in the URL (`https://user:pass@host`) are
 * not sent by undici (and make fetch throw): they become Basic auth, as curl and Go's HTTP client
 * treat them, unless the request already carries an Authorization header, and leave the URL.
 */
export function wireForm(request: Outgoing): { url: string; headers: Record<string, string> } {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return { url: request.url, headers: request.headers };
  }
  const credentials = urlCredentials(request.url);
  if (credentials === undefined) return { url: request.url, headers: request.headers };
  const headers = { ...request.headers };
  const hasAuth = Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
  if (!hasAuth) headers.authorization = `Basic ${basicCredential(credentials.user, credentials.password)}`;
  url.username = '';
  url.password = '';
  return { url: url.toString(), headers };
}

/** Most bytes of a reply we read: enough for an error message; the rest of a huge or endless body is discarded. */
export const MAX_REPLY_BYTES = 16 * 1024;
/** How long the body of a 2xx may take to end before it is cut off. */
const REPLY_GRACE_MS = 1000;

/**
 * After a 2xx the status line is the answer: the body is not ours to read, and a reply that
 * breaks off or never ends does not make the upload undelivered (sending it again would
 * duplicate it). It is read in the background, boundedly, so a connection whose body ends can be
 * reused, and cut off after REPLY_GRACE_MS, so one that trickles forever holds neither the
 * pipeline nor the socket.
 */
export function releaseReply(body: { dump(options: { limit: number }): Promise<void>; destroy(): unknown }): void {
  const timer = setTimeout(() => body.destroy(), REPLY_GRACE_MS);
  timer.unref();
  const done = () => clearTimeout(timer);
  body.dump({ limit: MAX_REPLY_BYTES }).then(done, done);
}

/** What the server said, trimmed for a one-line warning: printable characters only, at most `max` of them. */
export function replyExcerpt(bytes: Uint8Array, max = 200): string {
  return Buffer.from(bytes)
    .toString('utf8')
    .replace(/[\u0000-\u001f\u007f-\u009f\ufffd]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, max);
}
