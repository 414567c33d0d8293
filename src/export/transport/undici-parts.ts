import type { Dispatcher } from 'undici';
import { type UndiciParts, undiciParts } from '../../vendor.js';
import { type Outgoing, wireForm } from './outgoing.js';

/**
 * The parts of undici our uploads use: the agent, the connector, and the base class of dispatchers,
 * for the ones of ours that route requests (origin-routes.ts).
 */
export interface Undici extends Pick<UndiciParts, 'Agent' | 'buildConnector' | 'Dispatcher'> {
  /** The parts uploads through a proxy use, loaded at the first call: only when a proxy is set. */
  proxyParts(): ProxyParts;
  /**
   * POSTs one upload through `dispatcher`; credentials in its URL travel as Basic auth (wireForm).
   * `signal` is the attempt's one timeout: it ends the attempt whatever stage it is in.
   */
  post(dispatcher: Dispatcher, request: Outgoing, signal: AbortSignal): Promise<Dispatcher.ResponseData>;
}

/** What a proxy needs on top (proxy-agent.ts). */
export interface ProxyParts extends Pick<UndiciParts, 'ProxyAgent' | 'Pool'> {
  /** A Pool that can open CONNECT tunnels (see loadProxyParts). */
  TunnelPool: UndiciParts['Pool'];
}

let loaded: Undici | undefined;
let proxyParts: ProxyParts | undefined;

/**
 * undici's ProxyAgent and what it needs, from the same bundle. ProxyAgent opens its tunnels with
 * `client.connect()`, the CONNECT request that undici's index mixes into every dispatcher's
 * prototype: the bundle has no index, so it is added here to a Pool subclass of ours.
 */
function loadProxyParts(): ProxyParts {
  if (proxyParts) return proxyParts;
  const { Pool, connect, ProxyAgent } = undiciParts();
  const TunnelPool = class TunnelPool extends Pool {};
  Object.defineProperty(TunnelPool.prototype, 'connect', { value: connect, writable: true, configurable: true });
  proxyParts = { ProxyAgent, Pool, TunnelPool };
  return proxyParts;
}

/**
 * undici's agent, connector and request, from the bundle of its parts (src/vendor.ts), not through
 * its index, which also loads fetch, WebSocket, the HTTP cache, EventSource and the mocks: the
 * index took ~150 ms of the app's event loop at the first upload here, these parts about a third
 * of it, and the bundle, compiled from V8's code cache, less again (docs/performance.md).
 */
export function loadUndici(): Undici {
  if (loaded) return loaded;
  const { Agent, buildConnector, Dispatcher, request } = undiciParts();
  loaded = {
    Agent,
    buildConnector,
    Dispatcher,
    proxyParts: loadProxyParts,
    post(dispatcher, outgoing, signal) {
      const wire = wireForm(outgoing);
      const url = new URL(wire.url);
      return request.call(dispatcher, {
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        // A copy: a ProxyAgent adds `host` to the headers it is given, and ours are shared by a pipeline's requests.
        headers: { ...wire.headers },
        body: outgoing.body,
        // undici's own header and body timers would race the signal, with a message that does not say how long was waited.
        signal,
        headersTimeout: 0,
        bodyTimeout: 0,
      });
    },
  };
  return loaded;
}
