// Decodes an `Authorization: Basic ...` header (RFC 7617), the form Grafana
// Cloud expects for both Pyroscope and OTLP, so tests can assert the
// credentials a client sent rather than an opaque base64 string.

import type { IncomingHttpHeaders } from 'node:http';

export interface BasicCredentials {
  username: string;
  password: string;
}

export function basicAuthOf(headers: IncomingHttpHeaders): BasicCredentials | undefined {
  const match = /^Basic\s+(\S+)$/i.exec(headers.authorization ?? '');
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
