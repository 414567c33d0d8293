import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Attributes } from '@opentelemetry/api';

/**
 * A server span's attributes at the request's start, for the requests most servers get, built as
 * @opentelemetry/instrumentation-http's getIncomingRequestAttributes builds them (its
 * dist/utils.cjs) — the same keys, values and order — without its URL object and its object of
 * computed keys. For any other request it answers undefined and the caller asks the
 * instrumentation's own function: a proxy's Forwarded or X-Forwarded-* headers, a Host header
 * that is an IPv6 literal or that no URL could have, a target that is not a plain absolute path
 * (dot segments, percent escapes, characters a URL would encode, `*`), a method outside the
 * common ones. test/unit/http-request-attributes.test.ts holds the two side by side on every
 * shape of each.
 */

/** What the instrumentation reads of a request's peer (its uncachedPeer). */
export interface Peer {
  remoteAddress?: string | undefined;
  remotePort?: number | undefined;
}

export interface RequestAttributeParts {
  /** The peer of a request's socket, read as the instrumentation reads it. */
  peer(socket: Socket): Peer;
  /** The instrumentation's redaction of a query string (its redactQueryString). */
  redactQuery(query: string, names: readonly string[]): string;
  /** Query parameters whose values it redacts by default. */
  redactedNames: readonly string[];
}

/** Methods the instrumentation keeps as sent (every one is among its known methods). */
const COMMON_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);

/** A path a URL keeps character for character: absolute, not `//…`, nothing it would encode or resolve. */
const PLAIN_PATH = /^\/(?!\/)[\w\-.~!$&'()*+,;=:@/]*$/;
const DOT_SEGMENT = /\/\.{1,2}(?:\/|$)/;
/** A query of printable ASCII without a fragment: a URL's encoding of it is undone by URLSearchParams. */
const PLAIN_QUERY = /^[\x21\x22\x24-\x7e]*$/;

/** Whether a URL can have `scheme://host` as its base, by host; bounded, since the Host header is the client's to choose. */
const BASES = new Map<string, boolean>();
const BASES_KEPT = 64;

function baseParses(base: string): boolean {
  const known = BASES.get(base);
  if (known !== undefined) return known;
  const parses = URL.canParse(base);
  if (BASES.size < BASES_KEPT) BASES.set(base, parses);
  return parses;
}

/** The request's attributes, or undefined where the instrumentation's own function must decide. */
export function plainRequestAttributes(request: IncomingMessage, scheme: 'http' | 'https', parts: RequestAttributeParts): Attributes | undefined {
  const { headers, method, url } = request;
  if (method === undefined || !COMMON_METHODS.has(method) || url === undefined) return undefined;
  if (headers.forwarded !== undefined || headers['x-forwarded-host'] !== undefined || headers['x-forwarded-for'] !== undefined) return undefined;

  const host = headers.host;
  let serverHost: string | undefined;
  let serverPort: string | undefined;
  if (host !== undefined && host !== '') {
    const colon = host.indexOf(':');
    if (host.includes('[') || colon !== host.lastIndexOf(':') || !baseParses(`${scheme}://${host}`)) return undefined;
    serverHost = colon === -1 ? host : host.slice(0, colon);
    serverPort = colon === -1 ? (scheme === 'https' ? '443' : '80') : host.slice(colon + 1);
  }

  const mark = url.indexOf('?');
  const path = mark === -1 ? url : url.slice(0, mark);
  const query = mark === -1 ? '' : url.slice(mark + 1);
  if (!PLAIN_PATH.test(path) || DOT_SEGMENT.test(path) || !PLAIN_QUERY.test(query)) return undefined;

  const peer = parts.peer(request.socket);
  const attributes: Attributes = {
    'http.request.method': method,
    'url.scheme': scheme,
    'server.address': serverHost,
    'network.peer.address': peer.remoteAddress,
    'network.peer.port': peer.remotePort,
    'network.protocol.version': request.httpVersion,
    'user_agent.original': headers['user-agent'],
    'url.path': path,
  };
  if (query !== '') attributes['url.query'] = parts.redactQuery(query, parts.redactedNames);
  if (peer.remoteAddress) attributes['client.address'] = peer.remoteAddress;
  if (serverPort !== undefined) attributes['server.port'] = Number(serverPort);
  return attributes;
}
