// A local stand-in for Grafana Pyroscope's `/ingest` API and an OTLP/HTTP
// collector (traces; metrics and logs when asked), used by e2e tests and
// benchmarks in place of the real servers (which cannot be installed here).
// Protocol behaviour lives in ingest-endpoint.ts and otlp-endpoint.ts; this
// file is the HTTP server, the record keeping, fault injection and waiting.
//
//   const r = await startReceiver();
//   ... point the code under test at r.url ...
//   const rec = await r.waitFor(() => r.ingests.find((i) => i.metricName === 'wall'));
//   await r.close();

import type { IncomingMessage, ServerResponse } from 'node:http';
import { BehaviourSlot } from './behaviour.js';
import { header, type ReceivedRequest, type Reply } from './exchange.js';
import { listen, readBody, type TlsOptions } from './http-server.js';
import { handleIngest, ingestErrorReply, type ServiceNameLabelRule } from './ingest-endpoint.js';
import type { DecodedLogRecord } from './otlp-logs-decode.js';
import type { DecodedMetric } from './otlp-metrics-decode.js';
import type { DecodedSpan } from './otlp-types.js';
import type { Behaviour, Endpoint, IngestRecord, OtlpProfileRecord, RequestRecord, TraceExportRecord, WaitForOptions } from './receiver-types.js';
import { handleOtlpProfiles } from './pyroscope-otlp.js';
import { handleLogs, handleMetrics, handleTraces, otlpErrorReply, type SignalResult } from './otlp-endpoint.js';
import { Waiter } from './waiter.js';

export type * from './receiver-types.js';
export type { DecodedSpan, AttributeValue, Attributes } from './otlp-types.js';
export type { DecodedMetric, DecodedDataPoint } from './otlp-metrics-decode.js';
export type { DecodedLogRecord } from './otlp-logs-decode.js';
export { OtlpSpanKind } from './otlp-types.js';
export type { SampleView, SpanLink } from './pprof-helpers.js';
export {
  functionNamesOf,
  isValidSpanId,
  isValidTraceId,
  labelsOf,
  sampleValue,
  sampleViewsOf,
  spanLinkOf,
} from './pprof-helpers.js';
export { basicAuthOf } from './basic-auth.js';

export const INGEST_PATH = '/ingest';
export const TRACES_PATH = '/v1/traces';
export const OTLP_PROFILES_PATH = '/v1development/profiles';
export const METRICS_PATH = '/v1/metrics';
export const LOGS_PATH = '/v1/logs';

export interface ReceiverOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /**
   * Expected Authorization header per endpoint; a request without exactly
   * this value is answered 401 and not stored. Absent: anything is accepted,
   * as by an OSS Pyroscope or a collector without an auth extension.
   */
  requireAuthorization?: Partial<Record<Endpoint, string>>;
  /** Serve HTTPS with this key and certificate (PEM) instead of plain HTTP; `url` is then https://. */
  tls?: TlsOptions;
  /** How a `service_name` label in `/ingest`'s name is taken: as by Pyroscope 1.13+ (default) or an older one. */
  serviceNameLabel?: ServiceNameLabelRule;
  /**
   * A proxy in front of the OTLP endpoint that refuses larger bodies with 413, as nginx does past
   * its client_max_body_size (1 MiB by default). Absent: any size is taken.
   */
  maxTracesBodyBytes?: number;
  /**
   * Take OTLP metrics and logs too, as a collector does. Absent: /v1/metrics and /v1/logs are 404,
   * as on a traces-only backend (Tempo).
   */
  metricsAndLogs?: boolean;
}

export interface Receiver {
  /** http://127.0.0.1:<port> (https:// with the `tls` option) */
  readonly url: string;
  /** `${url}/ingest` */
  readonly ingestUrl: string;
  /** `${url}/v1/traces` */
  readonly tracesUrl: string;
  /** Profiles accepted, in arrival order. */
  readonly ingests: readonly IngestRecord[];
  /** Series made of OTLP profiles, as Pyroscope's /v1development/profiles makes them, in arrival order. */
  readonly otlpProfiles: readonly OtlpProfileRecord[];
  /** Spans accepted, flattened over all export requests, in arrival order. */
  readonly spans: readonly DecodedSpan[];
  /** Accepted OTLP export requests, with their headers. */
  readonly traceExports: readonly TraceExportRecord[];
  /** Metrics accepted (with `metricsAndLogs`), flattened over all export requests, in arrival order. */
  readonly metrics: readonly DecodedMetric[];
  /** Log records accepted (with `metricsAndLogs`), flattened over all export requests, in arrival order. */
  readonly logs: readonly DecodedLogRecord[];
  /** Every request, whatever its fate. */
  readonly requests: readonly RequestRecord[];
  /**
   * Resolves with the first truthy result of `check`, re-evaluated after every
   * received request, stored record and sent reply; rejects on timeout with a
   * summary of what did arrive.
   */
  waitFor<T>(check: () => T, options?: WaitForOptions): Promise<Exclude<T, false | 0 | '' | null | undefined>>;
  /** Sets (or with undefined clears) the fault behaviour of an endpoint. */
  setBehaviour(endpoint: Endpoint, behaviour: Behaviour | undefined): void;
  /** Forgets all records and behaviours. */
  reset(): void;
  /** Stops listening and destroys every connection, hung ones included. */
  close(): Promise<void>;
}

function endpointOf(path: string, metricsAndLogs: boolean): Endpoint | 'other' {
  if (path === INGEST_PATH) return 'ingest';
  if (path === TRACES_PATH) return 'traces';
  if (path === OTLP_PROFILES_PATH) return 'profiles';
  if (metricsAndLogs && path === METRICS_PATH) return 'metrics';
  if (metricsAndLogs && path === LOGS_PATH) return 'logs';
  return 'other';
}

function summarise<T>(items: readonly T[], key: (item: T) => string): string {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return [...counts].map(([k, n]) => (n > 1 ? `${k} ×${n}` : k)).join(', ') || 'none';
}

export async function startReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  const ingests: IngestRecord[] = [];
  const otlpProfiles: OtlpProfileRecord[] = [];
  const spans: DecodedSpan[] = [];
  const traceExports: TraceExportRecord[] = [];
  const metrics: DecodedMetric[] = [];
  const logs: DecodedLogRecord[] = [];
  const requests: RequestRecord[] = [];
  const behaviours: Record<Endpoint, BehaviourSlot> = {
    ingest: new BehaviourSlot(),
    traces: new BehaviourSlot(),
    profiles: new BehaviourSlot(),
    metrics: new BehaviourSlot(),
    logs: new BehaviourSlot(),
  };
  const metricsAndLogs = options.metricsAndLogs === true;
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;

  const waiter = new Waiter(
    () =>
      `requests: ${summarise(requests, (r) => `${r.method} ${r.path} → ${r.status ?? r.outcome}`)}\n` +
      `ingests: ${summarise(ingests, (i) => `${i.serviceName} ${i.metricName} (${i.samples.length} samples)`)}\n` +
      `spans: ${summarise(spans, (s) => s.name)}`,
  );

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  function errorReply(endpoint: Endpoint, request: ReceivedRequest, status: number, message: string): Reply {
    if (endpoint === 'profiles') return { status, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: `${message}\n`, error: message };
    return endpoint === 'ingest' ? ingestErrorReply(status, message) : otlpErrorReply(request, status, message);
  }

  function injectedReply(endpoint: Endpoint, request: ReceivedRequest, behaviour: Behaviour & { status: number }): Reply {
    const reply =
      behaviour.body !== undefined
        ? { status: behaviour.status, headers: {}, body: behaviour.body, error: behaviour.body }
        : errorReply(endpoint, request, behaviour.status, `test receiver: injected status ${behaviour.status}`);
    if (behaviour.retryAfter !== undefined) reply.headers = { ...reply.headers, 'retry-after': behaviour.retryAfter };
    return reply;
  }

  function send(res: ServerResponse, record: RequestRecord, reply: Reply, breakMidBody = false): void {
    if (closed || res.destroyed) return;
    record.status = reply.status;
    record.error = reply.error;
    if (breakMidBody) {
      // The status line and half of the body go out, then the connection dies.
      const body = Buffer.from(reply.body.length > 0 ? reply.body : 'x'.repeat(64));
      res.writeHead(reply.status, { ...reply.headers, 'content-length': String(body.length * 2) });
      res.write(body, () => res.socket?.destroy());
      record.outcome = 'reset';
      waiter.notify();
      return;
    }
    res.writeHead(reply.status, reply.headers);
    res.end(reply.body);
    waiter.notify();
  }

  async function handle(endpoint: Endpoint, request: ReceivedRequest, record: RequestRecord, res: ServerResponse): Promise<void> {
    const behaviour = behaviours[endpoint].take();
    if (behaviour?.reset) {
      record.outcome = 'reset';
      res.socket?.destroy();
      waiter.notify();
      return;
    }
    if (behaviour?.hang) {
      record.outcome = 'hung';
      waiter.notify();
      return;
    }
    if (behaviour?.delayMs !== undefined) await sleep(behaviour.delayMs);
    if (closed) return;
    if (behaviour?.status !== undefined) {
      record.outcome = 'injected';
      send(res, record, injectedReply(endpoint, request, { ...behaviour, status: behaviour.status }));
      return;
    }
    const required = options.requireAuthorization?.[endpoint];
    if (required !== undefined && header(request, 'authorization') !== required) {
      record.outcome = 'rejected';
      send(res, record, errorReply(endpoint, request, 401, 'test receiver: missing or wrong Authorization header'));
      return;
    }
    const breakReply = behaviour?.resetMidBody === 'response';
    const store = <T>({ reply, items }: SignalResult<T>, into: T[]): void => {
      if (items) into.push(...items);
      record.outcome = items ? 'stored' : 'rejected';
      send(res, record, reply, breakReply);
    };
    if (endpoint === 'traces' && options.maxTracesBodyBytes !== undefined && request.body.length > options.maxTracesBodyBytes) {
      record.outcome = 'rejected';
      const message = '413 Request Entity Too Large';
      send(res, record, { status: 413, headers: { 'content-type': 'text/html' }, body: `<html><head><title>${message}</title></head></html>`, error: message });
      return;
    }
    if (endpoint === 'ingest') {
      const { reply, record: ingest } = await handleIngest(request, options.serviceNameLabel);
      if (ingest) ingests.push(ingest);
      record.outcome = ingest ? 'stored' : reply.status < 300 ? 'ignored' : 'rejected';
      send(res, record, reply, breakReply);
    } else if (endpoint === 'profiles') {
      const { reply, records } = handleOtlpProfiles(request);
      otlpProfiles.push(...records);
      record.outcome = reply.status >= 300 ? 'rejected' : records.length > 0 ? 'stored' : 'ignored';
      send(res, record, reply, breakReply);
    } else if (endpoint === 'metrics') {
      store(handleMetrics(request), metrics);
    } else if (endpoint === 'logs') {
      store(handleLogs(request), logs);
    } else {
      const { reply, record: exported } = handleTraces(request);
      if (exported) {
        traceExports.push(exported);
        spans.push(...exported.spans);
      }
      record.outcome = exported ? 'stored' : 'rejected';
      send(res, record, reply, breakReply);
    }
  }

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawUrl = req.url ?? '/';
    const queryAt = rawUrl.indexOf('?');
    const path = queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt);
    const record: RequestRecord = {
      seq: 0,
      receivedAt: Date.now(),
      method: req.method ?? '',
      path,
      query: queryAt === -1 ? '' : rawUrl.slice(queryAt + 1),
      headers: req.headers,
      endpoint: endpointOf(path, metricsAndLogs),
      bodyBytes: 0,
      status: undefined,
      outcome: 'pending',
      error: undefined,
    };
    const endpoint = record.endpoint;
    if (endpoint !== 'other' && behaviours[endpoint].peek()?.resetMidBody === 'request') {
      behaviours[endpoint].take();
      record.seq = requests.length + 1;
      requests.push(record);
      record.outcome = 'reset';
      // Cut off while the body is coming in: the first bytes arrived, the rest never will.
      req.once('data', (chunk: Buffer) => {
        record.bodyBytes = chunk.length;
        req.socket.destroy();
        waiter.notify();
      });
      return;
    }
    const body = await readBody(req);
    record.seq = requests.length + 1;
    requests.push(record);
    if (body === undefined) {
      record.outcome = 'aborted';
      waiter.notify();
      return;
    }
    record.bodyBytes = body.length;
    waiter.notify();

    const request: ReceivedRequest = {
      receivedAt: record.receivedAt,
      method: record.method,
      path,
      query: record.query,
      headers: req.headers,
      body,
    };
    if (endpoint === 'other') {
      record.outcome = 'not-found';
      send(res, record, { status: 404, headers: { 'content-type': 'text/plain' }, body: '404 page not found\n', error: 'not found' });
      return;
    }
    if (record.method !== 'POST') {
      record.outcome = 'rejected';
      send(res, record, {
        status: 405,
        headers: { allow: 'POST', 'content-type': 'text/plain' },
        body: '405 method not allowed\n',
        error: 'method not allowed',
      });
      return;
    }
    await handle(endpoint, request, record, res);
  }

  const server = await listen(onRequest, options.host ?? '127.0.0.1', options.port ?? 0, options.tls);
  const url = server.url;

  return {
    url,
    ingestUrl: url + INGEST_PATH,
    tracesUrl: url + TRACES_PATH,
    ingests,
    otlpProfiles,
    spans,
    traceExports,
    metrics,
    logs,
    requests,
    waitFor: (check, waitOptions) => waiter.waitFor(check, waitOptions),
    setBehaviour: (endpoint, behaviour) => behaviours[endpoint].set(behaviour),
    reset: () => {
      ingests.length = 0;
      otlpProfiles.length = 0;
      spans.length = 0;
      traceExports.length = 0;
      metrics.length = 0;
      logs.length = 0;
      requests.length = 0;
      for (const slot of Object.values(behaviours)) slot.set(undefined);
    },
    close: async () => {
      if (closed) return;
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      waiter.close(new Error('receiver closed while waiting'));
      await server.close();
    },
  };
}
