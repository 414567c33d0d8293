/**
 * A secret in a signal's own OTLP headers is never printed, under any header name, while a gateway
 * that echoes the request's headers in its error body refuses every upload of that signal: traces,
 * metrics, logs and profiles (over OTLP). The warning about the refusal is printed, with the body,
 * the secret masked in it.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { fixture, runCli } from '../support/child.js';

const SIGNALS = [
  { signal: 'TRACES', path: '/v1/traces' },
  { signal: 'METRICS', path: '/v1/metrics' },
  { signal: 'LOGS', path: '/v1/logs' },
  { signal: 'PROFILES', path: '/v1development/profiles' },
] as const;

interface Gateway {
  url: string;
  /** Paths of the requests that carried `header`. */
  refusedWith: (header: string) => Set<string>;
  /** Resolves when a request to `path` carrying `header` has been refused. */
  refused: (path: string, header: string) => Promise<void>;
  server: Server;
}

/** Answers every request 401, its body the request's headers as JSON, as some API gateways do. */
async function echoingGateway(): Promise<Gateway> {
  const seen: IncomingMessage[] = [];
  const waiting: { path: string; header: string; resolve: () => void }[] = [];
  const server = createServer((request, response) => {
    seen.push(request);
    request.resume();
    request.on('end', () => {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: 'unauthorized', headers: request.headers }));
      for (const wait of waiting) if (wait.path === request.url && request.headers[wait.header] !== undefined) wait.resolve();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const refusedWith = (header: string) => new Set(seen.filter((request) => request.headers[header] !== undefined).map((request) => request.url ?? ''));
  const refused = (path: string, header: string) => new Promise<void>((resolve) => waiting.push({ path, header, resolve }));
  return { url: `http://127.0.0.1:${port}`, refusedWith, refused, server };
}

for (const { signal, path } of SIGNALS) {
  test(`a key in OTEL_EXPORTER_OTLP_${signal}_HEADERS is never printed while a gateway echoes it back refusing every ${signal.toLowerCase()} upload`, async (t) => {
    const gateway = await echoingGateway();
    t.after(() => gateway.server.close());
    const key = `hc-${signal.toLowerCase()}-0123456789abcdef`;
    const header = `x-${signal.toLowerCase()}-team`;
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: gateway.url,
      [`OTEL_EXPORTER_OTLP_${signal}_HEADERS`]: `${header}=${key}`,
      OTEL_METRICS_EXPORTER: 'otlp',
      OTEL_METRIC_EXPORT_INTERVAL: '500',
      OTEL_LOGS_EXPORTER: 'otlp',
      OTEL_BLRP_SCHEDULE_DELAY: '100',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      PYRO_RUN_PROFILES_EXPORTER: 'otlp',
      PYROSCOPE_FLUSH_INTERVAL_MS: '1000',
    };
    const app = runCli(['--service-name', 'echoed', '--', fixture('apps/fastify-logged.cjs')], { env });
    t.after(() => app.process.kill('SIGKILL'));
    const refused = gateway.refused(path, header);
    const port = Number((await app.line(/^listening (\d+)$/m))[1]);
    for (let id = 1; id <= 5; id++) assert.equal((await fetch(`http://127.0.0.1:${port}/orders/${id}`)).status, 200);
    await refused;
    assert.equal((await fetch(`http://127.0.0.1:${port}/close`)).status, 200);
    assert.equal((await app.exit()).code, 0, app.stderr);

    assert.deepEqual([...gateway.refusedWith(header)], [path], 'the header went with its own signal only');
    const output = app.stdout + app.stderr;
    for (const form of [key, encodeURIComponent(key), Buffer.from(key).toString('base64')]) assert.ok(!output.includes(form), `the key leaked:\n${app.stderr}`);
    const warnings = app.stderr.split('\n').filter((line) => line.startsWith('pyro-run: warning:') && line.includes('401'));
    assert.ok(
      warnings.some((line) => line.includes(`"${header}":"[redacted]"`)),
      `the refusal is told, with the echoed header masked:\n${app.stderr}`,
    );
  });
}
