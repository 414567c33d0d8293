import type { ServerResponse } from 'node:http';

/**
 * Where the server path (http-server-spans.ts) lets other spans of a request end with its
 * response, without a `close` listener each: on the RPC metadata it puts in the request's context
 * (OpenTelemetry's `{ type, span, route }`, which frameworks' instrumentations read already), the
 * response and the work to run when it closes. Symbol keys: invisible to anything that reads the
 * metadata by its documented fields or lists its keys.
 */
const RESPONSE = Symbol('pyro-run.response');
const ON_CLOSE = Symbol('pyro-run.on-close');

export interface ClosingResponse {
  [RESPONSE]: ServerResponse;
  [ON_CLOSE]: (() => void) | (() => void)[] | undefined;
}

/** `metadata` made the one of `response`'s request: its two fields set as it is made, so that every request's has one shape. */
export function withClosing<T extends object>(metadata: T, response: ServerResponse): T & ClosingResponse {
  const closing = metadata as T & ClosingResponse;
  closing[RESPONSE] = response;
  closing[ON_CLOSE] = undefined;
  return closing;
}

/**
 * Runs `work` when `response` closes, after the request's span ended, as a `close` listener added
 * now would run, when `metadata` is the server path's for that response; false when it is not (a
 * response the path did not span, another server's metadata): the caller listens itself.
 */
export function onResponseClose(metadata: object | undefined, response: unknown, work: () => void): boolean {
  const closing = metadata as Partial<ClosingResponse> | undefined;
  if (closing === undefined || closing[RESPONSE] !== response || response === undefined) return false;
  const pending = closing[ON_CLOSE];
  if (pending === undefined) closing[ON_CLOSE] = work;
  else if (typeof pending === 'function') closing[ON_CLOSE] = [pending, work];
  else pending.push(work);
  return true;
}

/** The work `onResponseClose` took for the response, in the order given, once. */
export function responseClosed(closing: ClosingResponse): void {
  const pending = closing[ON_CLOSE];
  if (pending === undefined) return;
  closing[ON_CLOSE] = undefined;
  if (typeof pending === 'function') pending();
  else for (const work of pending) work();
}
