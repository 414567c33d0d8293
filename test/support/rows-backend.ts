import { createServer } from 'node:http';

export interface RowsBackend {
  url: string;
  stop(): Promise<void>;
}

/**
 * The HTTP backend of test/fixtures/apps/pooled-clients.cjs with CLIENT=http or fetch: GET
 * /rows/<n> answers n lines of text.
 */
export async function startRowsBackend(): Promise<RowsBackend> {
  const server = createServer((req, res) => {
    const rows = Number(req.url?.split('/')[2] ?? 0);
    res.setHeader('content-type', 'text/plain');
    for (let i = 0; i < rows; i++) res.write(`row ${i} ${'x'.repeat(50)}\n`);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
