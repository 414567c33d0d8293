/**
 * One HTTP request we owe a backend: a profile upload or a span batch. Built once, sent by the
 * steady-state sender or, at exit, by the synchronous final flush: both send the same thing.
 */
export interface Outgoing {
  /** Which pipeline it belongs to; failure warnings are keyed by it. */
  kind: 'profiles' | 'spans';
  url: string;
  headers: Record<string, string>;
  body: Uint8Array;
  /** Short human text for logs, e.g. `cpu profile 12:00:00–12:00:15`. Never holds secrets. */
  what: string;
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
