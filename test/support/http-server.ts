// The receiver's HTTP plumbing: listening, reading whole bodies, and a close()
// that also ends connections no reply will ever be written to (hung requests,
// idle keep-alive sockets of exporters), which server.close() alone waits for.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
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

export async function listen(handler: RequestHandler, host: string, port: number): Promise<ListeningServer> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    handler(req, res).catch((error: unknown) => {
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`test receiver bug: ${(error as Error).stack ?? String(error)}`);
      }
    });
  });
  server.on('connection', (socket) => {
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
    url: `http://${hostPart}:${address.port}`,
    close: async () => {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await stopped;
    },
  };
}
