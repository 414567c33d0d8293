import { createRequire } from 'node:module';
import type { Dispatcher } from 'undici';
import { type Outgoing, wireForm } from './outgoing.js';

const require = createRequire(import.meta.url);

type UndiciIndex = typeof import('undici');

/** The parts of undici our uploads use. */
export interface Undici {
  Agent: UndiciIndex['Agent'];
  buildConnector: UndiciIndex['buildConnector'];
  /** The base class of dispatchers, for the ones of ours that route requests (origin-routes.ts). */
  Dispatcher: UndiciIndex['Dispatcher'];
  /** The parts uploads through a proxy use, loaded at the first call: only when a proxy is set. */
  proxyParts(): ProxyParts;
  /**
   * POSTs one upload through `dispatcher`; credentials in its URL travel as Basic auth (wireForm).
   * `signal` is the attempt's one timeout: it ends the attempt whatever stage it is in.
   */
  post(dispatcher: Dispatcher, request: Outgoing, signal: AbortSignal): Promise<Dispatcher.ResponseData>;
}

/** What a proxy needs on top (proxy-agent.ts). */
export interface ProxyParts {
  ProxyAgent: UndiciIndex['ProxyAgent'];
  Pool: UndiciIndex['Pool'];
  /** A Pool that can open CONNECT tunnels (see loadProxyParts). */
  TunnelPool: UndiciIndex['Pool'];
}

let loaded: Undici | undefined;
let proxyParts: ProxyParts | undefined;

/**
 * undici's ProxyAgent and what it needs, one by one as loadUndici does. ProxyAgent opens its
 * tunnels with `client.connect()`, the CONNECT request that undici's index mixes into every
 * dispatcher's prototype: it is added here to a Pool subclass of ours instead, so undici's shared
 * prototypes (an app may use the same copy) stay as they are.
 */
function loadProxyParts(): ProxyParts {
  if (proxyParts) return proxyParts;
  const Pool = require('undici/lib/dispatcher/pool.js') as UndiciIndex['Pool'];
  const connect = require('undici/lib/api/api-connect.js') as unknown;
  const TunnelPool = class TunnelPool extends Pool {};
  Object.defineProperty(TunnelPool.prototype, 'connect', { value: connect, writable: true, configurable: true });
  proxyParts = {
    ProxyAgent: require('undici/lib/dispatcher/proxy-agent.js') as UndiciIndex['ProxyAgent'],
    Pool,
    TunnelPool,
  };
  return proxyParts;
}

/**
 * undici's agent, connector and request, required one by one instead of through its index, which
 * also loads fetch, WebSocket, the HTTP cache, EventSource and the mocks: the index took ~150 ms
 * of the app's event loop at the first upload here, these parts about a third of it. undici has
 * no `exports` map, so the paths are public to Node; the version is pinned and every upload test
 * goes through them.
 */
export function loadUndici(): Undici {
  if (loaded) return loaded;
  const Agent = require('undici/lib/dispatcher/agent.js') as UndiciIndex['Agent'];
  const buildConnector = require('undici/lib/core/connect.js') as UndiciIndex['buildConnector'];
  // The request API as undici's index mixes it into every dispatcher.
  const request = require('undici/lib/api/api-request.js') as (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
  loaded = {
    Agent,
    buildConnector,
    Dispatcher: require('undici/lib/dispatcher/dispatcher.js') as UndiciIndex['Dispatcher'],
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
