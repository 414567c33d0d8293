import { type AddressInfo, createServer, type Server } from 'node:net';
import { createAgent } from './dispatcher.js';
import { releaseReply, type Transport } from './outgoing.js';
import type { Undici } from './undici-parts.js';

/** The one answer the warm-up's server gives: an empty 204, and the connection closed. */
const ANSWER = 'HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n';
/** The end of a request's head; the warm-up's request has no body. */
const HEAD_END = '\r\n\r\n';

/**
 * Runs the HTTP client's request path once at start-up, against a server of our own on the
 * loopback interface: undici's dispatch, the connection (its HTTP parser is WebAssembly compiled
 * at the first connection), the request written, the answer parsed. Run cold, that path is much
 * of the first upload's cost, and the first upload falls in the app's first seconds of traffic,
 * where the app's own code runs cold too (docs/performance.md, "Flush pauses and event-loop stalls").
 * Nothing leaves the machine: the server listens on 127.0.0.1 on a port the OS picks, for one
 * exchange, without proxy or TLS, and neither it nor the connection keeps the process alive.
 * Resolves when the exchange is over, rejects if it could not happen (the caller ignores both).
 */
export async function warmUpOnLoopback(undici: Undici, transport: Pick<Transport, 'timeoutMs'>): Promise<void> {
  const server = await listenOnLoopback();
  const dispatcher = createAgent(undici, { timeoutMs: transport.timeoutMs, tlsSkipVerify: false, proxy: undefined, originTls: [] }, { unrefSockets: true });
  try {
    const { port } = server.address() as AddressInfo;
    const reply = await undici.post(
      dispatcher,
      { kind: 'spans', url: `http://127.0.0.1:${port}/`, headers: {}, body: new Uint8Array(0), what: 'warm-up' },
      AbortSignal.timeout(transport.timeoutMs),
    );
    releaseReply(reply.body);
  } finally {
    server.close();
    void dispatcher.close().catch(() => undefined);
  }
}

/** A server that answers each request's head with ANSWER, listening on 127.0.0.1. */
function listenOnLoopback(): Promise<Server> {
  const server = createServer((socket) => {
    socket.unref();
    let head = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      head += chunk;
      if (head.includes(HEAD_END)) socket.end(ANSWER);
    });
    socket.on('error', () => socket.destroy());
  });
  server.unref();
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    // Exclusive: in a cluster worker a listen otherwise goes through the primary (lib/net.js,
    // listenInCluster), which then emits 'listening' for it to the app and exchanges messages
    // with the worker over its IPC channel, while the worker may be disconnecting.
    server.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => resolve(server));
  });
}
