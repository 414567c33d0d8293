// The receiver's HTTP plumbing: listening, reading whole bodies, and a close()
// that also ends connections no reply will ever be written to (hung requests,
// idle keep-alive sockets of exporters), which server.close() alone waits for.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export interface ListeningServer {
  url: string;
  close(): Promise<void>;
}

/** The complete body, or undefined if the client went away first. */
export function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', () => resolve(undefined));
    req.on('close', () => {
      if (!req.complete) resolve(undefined);
    });
  });
}

/** PEM key and certificate chain of an HTTPS listener. */
export interface TlsOptions {
  key: string | Buffer;
  cert: string | Buffer;
  /** Mutual TLS: the CA client certificates must be signed by; every client must then present one. */
  clientCa?: string;
}

export async function listen(handler: RequestHandler, host: string, port: number, tls?: TlsOptions): Promise<ListeningServer> {
  const sockets = new Set<Socket>();
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    handler(req, res).catch((error: unknown) => {
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`test receiver bug: ${(error as Error).stack ?? String(error)}`);
      }
    });
  };
  const clientCertificates = tls?.clientCa === undefined ? {} : { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true };
  const server = tls ? createTlsServer({ key: tls.key, cert: tls.cert, ...clientCertificates }, onRequest) : createServer(onRequest);
  // TCP sockets, before any TLS handshake: a client that fails the handshake is closed too.
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `${tls ? 'https' : 'http'}://${hostPart}:${address.port}`,
    close: async () => {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await stopped;
    },
  };
}
