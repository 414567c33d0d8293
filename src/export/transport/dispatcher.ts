import type { LookupFunction } from 'node:net';
import type { buildConnector, Dispatcher } from 'undici';
import type { Transport } from './outgoing.js';
import { proxyRoutes } from './proxy-agent.js';
import { type OriginTls, originOfUrl } from './origin-tls.js';
import { routeByOrigin } from './origin-routes.js';
import type { Undici } from './undici-parts.js';

type LookupCallback = Parameters<LookupFunction>[2];
const lookupsInFlight = new Map<string, LookupCallback[]>();

/**
 * dns.lookup, with concurrent lookups of the same name joined into one. Node resolves names with
 * getaddrinfo on libuv's threadpool (4 threads by default, shared with the app's fs, crypto and
 * zlib work), and a lookup cannot be cancelled: when the resolver hangs, the connect timeout ends
 * our attempt but the lookup keeps its thread until the OS gives up. Without joining, every retry
 * of every pipeline started one more, and within seconds the app's own threadpool work stopped.
 * Joined, a hanging resolver holds at most one thread per backend name (per thread of ours).
 */
const sharedLookup: LookupFunction = (hostname, options, callback) => {
  const key = `${hostname}\0${JSON.stringify(options)}`;
  const waiting = lookupsInFlight.get(key);
  if (waiting) {
    waiting.push(callback);
    return;
  }
  lookupsInFlight.set(key, [callback]);
  // Looked up at call time, so whatever dns.lookup is then (a test's stand-in) is the one used;
  // and node:dns is not loaded at start (an ESM import would also load dns.promises).
  process.getBuiltinModule('node:dns').lookup(hostname, options, (error, address, family) => {
    const callbacks = lookupsInFlight.get(key) ?? [];
    lookupsInFlight.delete(key);
    for (const done of callbacks) done(error, address, family);
  });
};

/** How long an idle connection is kept for the next upload. */
const KEEP_ALIVE_MS = 4_000;

type Connector = buildConnector.connector;

/**
 * `connect`, with the sockets it makes never keeping the app alive when `unref`, not even
 * mid-request: undici re-refs busy sockets, so `ref` is neutralised on the sockets we own.
 */
function ownedSockets(unref: boolean): (connect: Connector) => Connector {
  if (!unref) return (connect) => connect;
  return (connect) => (connectOptions, callback) =>
    connect(connectOptions, (error, socket) => {
      if (socket) {
        socket.unref();
        socket.ref = () => socket;
      }
      callback(error as Error & null, socket as never);
    });
}

type Parts = Pick<Undici, 'Agent' | 'buildConnector' | 'Dispatcher' | 'proxyParts'>;
type TlsMaterial = Omit<OriginTls, 'origin'>;

/** Direct connections, and through the proxies when set, with `tls` added to every TLS handshake to a backend. */
function agentWith(undici: Parts, transport: Transport, tls: TlsMaterial, unrefSockets: boolean): Dispatcher {
  const own = ownedSockets(unrefSockets);
  // The timeout covers the lookup too: undici starts it as soon as net.connect has begun looking the name up.
  const reach = { timeout: transport.timeoutMs, lookup: sharedLookup };
  // Only ever relaxed by the explicit opt-out: Node's default (verify against its CA store, plus
  // NODE_EXTRA_CA_CERTS, plus the origin's own CA when it has one) otherwise.
  const verify = transport.tlsSkipVerify ? { rejectUnauthorized: false } : {};
  const toBackend = { ...tls, ...verify };
  const direct = new undici.Agent({ keepAliveTimeout: KEEP_ALIVE_MS, connect: own(undici.buildConnector({ ...reach, ...toBackend })) });
  if (transport.proxy === undefined) return direct;
  const proxied = proxyRoutes(undici.proxyParts(), direct, transport.proxy, {
    keepAliveTimeout: KEEP_ALIVE_MS,
    own,
    toProxy: reach,
    toBackend: { timeout: transport.timeoutMs, ...toBackend },
    tunnelTimeoutMs: transport.timeoutMs,
  });
  return routeByOrigin(undici.Dispatcher, proxied.route, proxied.all);
}

/**
 * `ca` added to the CAs Node trusts (its own and NODE_EXTRA_CA_CERTS), where node:tls's `ca` alone
 * would replace them: a collector whose certificate comes from a public CA still verifies.
 */
function withNodeCas(tls: TlsMaterial): TlsMaterial {
  if (tls.ca === undefined) return tls;
  const { getCACertificates } = process.getBuiltinModule('node:tls');
  return { ...tls, ca: [...getCACertificates('default'), tls.ca].join('\n') };
}

/**
 * The one undici dispatcher recipe, used by the sender (main thread) and by the flush worker
 * (exit), so certificate checks, timeouts, proxies and client certificates cannot differ between
 * the two. `unrefSockets`: no socket keeps the app alive (ownedSockets); when the app is done, the
 * exit path flushes what is still pending. With a proxy set, requests go through it per their
 * origin (proxy-agent.ts), with the same connect timeout, lookup and certificate checks. Origins
 * with TLS material of their own (the OTLP endpoints' CA and client certificate, origin-tls.ts)
 * get connections of their own.
 */
export function createAgent(undici: Parts, transport: Transport, options: { unrefSockets: boolean }): Dispatcher {
  const base = agentWith(undici, transport, {}, options.unrefSockets);
  if (transport.originTls.length === 0) return base;
  const own = new Map(transport.originTls.map(({ origin, ...tls }) => [origin, agentWith(undici, transport, withNodeCas(tls), options.unrefSockets)]));
  const route = (origin: string): Dispatcher => own.get(originOfUrl(origin) ?? '') ?? base;
  return routeByOrigin(undici.Dispatcher, route, () => [base, ...own.values()]);
}
