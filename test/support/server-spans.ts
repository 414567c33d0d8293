/**
 * The spans a traced server fixture (test/fixtures/http-server-spans/) finished for a list of
 * requests, sent one after the other: what the tests of pyro-run's lighter server and framework
 * paths compare with the packages' own.
 */
import { request } from 'node:http';
import { fixture, runNode } from './child.js';

/** A finished span as the fixtures print it (traced.mjs). */
export interface SpanView {
  name: string;
  kind: number;
  scope: string;
  status: { code: number; message?: string };
  attributes: [string, unknown][];
  events: { name: string; attributes: [string, unknown][] }[];
  parent?: { traceId: string; remote: boolean };
  parentName?: string;
  ended: boolean;
}

export interface ServerRequest {
  path: string;
  headers?: Record<string, string>;
}

function send(port: number, path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Runs the fixture `file` with `args`, sends `requests`, then GET /done: the spans it printed, what reached uncaughtException, each request's status. */
export async function serverSpans(
  file: string,
  args: readonly string[],
  requests: readonly ServerRequest[],
): Promise<{ spans: SpanView[]; thrown: string[]; statuses: number[] }> {
  const child = runNode([fixture(`http-server-spans/${file}`), ...args]);
  const port = Number((await child.line(/listening (\d+)/))[1]);
  const statuses: number[] = [];
  for (const { path, headers } of requests) statuses.push(await send(port, path, headers));
  const done = child.line(/^\{.*\}$/m);
  await send(port, '/done');
  const [line] = await done;
  await child.exit();
  return { ...JSON.parse(line), statuses };
}

/** A span's attributes as an object. */
export const attributesOf = (span: SpanView): Record<string, unknown> => Object.fromEntries(span.attributes);
