// The request/reply pair endpoint handlers work on, so protocol logic stays
// free of node:http plumbing (and of the fault injection wrapped around it).

import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

export interface ReceivedRequest {
  receivedAt: number;
  method: string;
  path: string;
  /** Raw query string without '?'. */
  query: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface Reply {
  status: number;
  headers: OutgoingHttpHeaders;
  body: string | Uint8Array;
  /** Message of a rejection, for the request log. */
  error?: string;
}

export function header(request: ReceivedRequest, name: string): string {
  const value = request.headers[name];
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
}
