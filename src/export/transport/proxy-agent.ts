import type { buildConnector, Dispatcher } from 'undici';
import { type ProxyEndpoint, type ProxySettings, proxyFor } from '../../config/proxy.js';
import type { ProxyParts } from './undici-parts.js';

type Connector = buildConnector.connector;

/** How connections through a proxy are made: the same settings as direct ones, where they apply. */
export interface ProxyRecipe {
  keepAliveTimeout: number;
  /** Wraps each connector, for the sockets it makes (outgoing.ts ownedSockets). */
  own: (connect: Connector) => Connector;
  /** The connection to the proxy: connect timeout and lookup. Its certificate (an https:// proxy) is always verified. */
  toProxy: buildConnector.BuildOptions;
  /** TLS to an https:// backend inside the tunnel: connect timeout and certificate checks, as direct. */
  toBackend: buildConnector.BuildOptions;
  /** How long a proxy may take to answer a CONNECT. */
  tunnelTimeoutMs: number;
}

/**
 * undici's ProxyAgent for one proxy. http:// requests go to the proxy in absolute form and https://
 * ones through a CONNECT tunnel, as curl and Go send them (undici's default would tunnel http://
 * too, which proxies often allow to port 443 only). Credentials go as Proxy-Authorization, on the
 * CONNECT or on each absolute-form request, never to the backend.
 */
function proxyAgent(parts: ProxyParts, proxy: ProxyEndpoint, recipe: ProxyRecipe): Dispatcher {
  type PoolOptions = ConstructorParameters<ProxyParts['Pool']>[1] & { connect: Connector };
  return new parts.ProxyAgent({
    uri: proxy.url,
    ...(proxy.credential === undefined ? {} : { token: `Basic ${proxy.credential}` }),
    proxyTunnel: false,
    keepAliveTimeout: recipe.keepAliveTimeout,
    proxyTls: recipe.toProxy,
    requestTls: recipe.toBackend,
    // The connections CONNECT is sent on: a tunnel's socket is one of them.
    clientFactory: (origin, options) =>
      new parts.TunnelPool(origin, {
        ...(options as PoolOptions),
        connect: recipe.own((options as PoolOptions).connect),
        headersTimeout: recipe.tunnelTimeoutMs,
      }),
    // Per backend through a tunnel, and per proxy for absolute-form requests.
    factory: (origin, options) => new parts.Pool(origin, { ...(options as PoolOptions), connect: recipe.own((options as PoolOptions).connect) }),
  });
}

/**
 * The dispatcher each origin's requests take: the proxy's (proxyFor: HTTP_PROXY, HTTPS_PROXY,
 * NO_PROXY), or `direct`; one ProxyAgent per proxy, made at its first request. `all`: every
 * dispatcher made so far, to close them as one (origin-routes.ts).
 */
export function proxyRoutes(
  parts: ProxyParts,
  direct: Dispatcher,
  settings: ProxySettings,
  recipe: ProxyRecipe,
): { route: (origin: string) => Dispatcher; all: () => Dispatcher[] } {
  const agents = new Map<string, Dispatcher>();
  const routes = new Map<string, Dispatcher>();
  const route = (origin: string): Dispatcher => {
    let dispatcher = routes.get(origin);
    if (dispatcher === undefined) {
      const proxy = proxyFor(origin, settings);
      dispatcher = proxy === undefined ? direct : (agents.get(proxy.url) ?? proxyAgent(parts, proxy, recipe));
      if (proxy !== undefined) agents.set(proxy.url, dispatcher);
      routes.set(origin, dispatcher);
    }
    return dispatcher;
  };
  return { route, all: () => [direct, ...agents.values()] };
}
