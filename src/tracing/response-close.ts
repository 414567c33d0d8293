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
  [RESPONSE]: ServerResponse | undefined;
  [ON_CLOSE]: (() => void) | (() => void)[] | undefined;
}

/** The RPC metadata of `response`'s request, with the server path's fields set as it is made (one shape for every request's). */
export function closingMetadata<T extends string, S>(type: T, span: S, response: ServerResponse): { type: T; span: S; route?: string } & ClosingResponse {
  return { type, span, [RESPONSE]: response, [ON_CLOSE]: undefined };
}

/**
 * Runs `work` when `response` closes, after the request's span ended, as a `close` listener added
 * now would run, when `metadata` is the server path's for that response and it has not closed yet;
 * false otherwise (a response the path did not span, another server's metadata, a response already
 * closed): the caller listens itself.
 */
export function onResponseClose(metadata: object | undefined, response: unknown, work: () => void): boolean {
  const closing = metadata as Partial<ClosingResponse> | undefined;
  if (closing === undefined || response === undefined || closing[RESPONSE] !== response) return false;
  const pending = closing[ON_CLOSE];
  if (pending === undefined) closing[ON_CLOSE] = work;
  else if (typeof pending === 'function') closing[ON_CLOSE] = [pending, work];
  else pending.push(work);
  return true;
}

/**
 * The response closed: the work `onResponseClose` took runs, in the order given, once. The metadata
 * lets go of the response: the request's contexts can outlive it (held by what was scheduled in
 * them), and through this field each would keep the whole response — request, socket, parser —
 * alive with it.
 */
export function responseClosed(closing: ClosingResponse): void {
  const pending = closing[ON_CLOSE];
  closing[RESPONSE] = undefined;
  closing[ON_CLOSE] = undefined;
  if (pending === undefined) return;
  if (typeof pending === 'function') pending();
  else for (const work of pending) work();
}
