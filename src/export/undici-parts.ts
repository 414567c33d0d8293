import { createRequire } from 'node:module';
import type { Dispatcher } from 'undici';
import { type Outgoing, wireForm } from './outgoing.js';

const require = createRequire(import.meta.url);

type UndiciIndex = typeof import('undici');

/** The parts of undici our uploads use. */
export interface Undici {
  Agent: UndiciIndex['Agent'];
  buildConnector: UndiciIndex['buildConnector'];
  /** POSTs one upload through `dispatcher`; credentials in its URL travel as Basic auth (wireForm). */
  post(dispatcher: Dispatcher, request: Outgoing, options: { signal: AbortSignal; timeoutMs: number }): Promise<Dispatcher.ResponseData>;
}

let loaded: Undici | undefined;

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
    post(dispatcher, outgoing, { signal, timeoutMs }) {
      const wire = wireForm(outgoing);
      const url = new URL(wire.url);
      return request.call(dispatcher, {
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: wire.headers,
        body: outgoing.body,
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
    },
  };
  return loaded;
}
