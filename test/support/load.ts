import assert from 'node:assert/strict';
import type { Child } from './child.js';

/** Sends `total` GETs with `concurrency` in flight; every response must be 200. Returns the paths sent. */
export async function load(baseUrl: string, paths: (i: number) => string, total: number, concurrency: number): Promise<string[]> {
  const sent: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const path = paths(next++);
      sent.push(path);
      const response = await fetch(`${baseUrl}${path}`);
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return sent;
}

/**
 * Drives an app run with pyro-run as the end-to-end tests do: waits for its `listening <port>`,
 * sends `total` GETs with `concurrency` in flight, then SIGTERM — the app must die of it, having
 * said no warning or error. Returns when it was listening (epoch ms).
 */
export async function serveThenTerminate(
  app: Child,
  paths: (i: number) => string,
  total: number,
  concurrency: number,
  listenTimeoutMs = 30_000,
): Promise<number> {
  const port = (await app.line(/listening (\d+)/, listenTimeoutMs))[1];
  const listeningAt = Date.now();
  await load(`http://127.0.0.1:${port}`, paths, total, concurrency);
  app.process.kill('SIGTERM');
  const exit = await app.exit();
  assert.equal(exit.signal, 'SIGTERM', `expected death by SIGTERM, got ${JSON.stringify(exit)}\n${app.stderr}`);
  assert.doesNotMatch(app.stderr, /warning|error/i);
  return listeningAt;
}
