import { subscribeSafely } from '../tracing/library-callbacks.js';
import type { Logger } from '../log.js';
import type { SampleOwner } from '../span-link/linking.js';
import { labelsOf, ownReads, tagCommand } from './requests.js';

/** undici's diagnostics channels (lib/core/diagnostics.js), shared by npm's undici and the copy inside Node that runs fetch. */
const REQUEST_CREATE = 'undici:request:create';
const SEND_HEADERS = 'undici:client:sendHeaders';

/** On a socket: the request whose response it reads now. */
const RESPONDING = Symbol('pyro-run undici request');
type Socket = { [RESPONDING]?: unknown };

/**
 * undici (and fetch, which runs Node's own copy of it): a pooled keep-alive socket parses every
 * response in the async context of the request that opened it. An HTTP/1.1 connection carries one
 * request at a time (undici pipelines none by default), so the socket reads for the request whose
 * headers it sent last. Through diagnostics channels, as Node's copy of undici cannot be reached
 * by the require hooks:
 * - a request is tagged with its caller's labels when it is made (`undici:request:create`, in the
 *   caller's context);
 * - when its headers go out on a socket (`undici:client:sendHeaders`), that socket's reads are its.
 * HTTP/2 (opt-in) multiplexes streams on one socket and is left as it is.
 */
export function startUndiciHooks(owner: SampleOwner, log: Logger): void {
  const what = "following fetch's (undici's) responses to their requests";
  subscribeSafely(REQUEST_CREATE, log, what, (message) => tagCommand((message as { request?: unknown }).request, owner));
  subscribeSafely(SEND_HEADERS, log, what, (message) => {
    const { request, socket } = message as { request?: unknown; socket?: Socket };
    if (typeof socket !== 'object' || socket === null) return;
    socket[RESPONDING] = request;
    // undici pulls what the socket read on 'readable'.
    ownReads(socket, () => labelsOf(socket[RESPONDING]), owner, 'readable');
  });
}
