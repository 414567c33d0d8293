// Recordings of many requests with a known CPU per request and function, for comparing runs
// (`pyro-run diff`): each request is a local root with its own CPU and wall samples, counted in the
// manifest's endpoint totals as the recorder counts every root.

import { EndpointTotals } from '../../src/export/local/endpoint-totals.js';
import { type FrameSpec, type SampleSpec, type SpanSpec, spanIdOf, traceIdOf, writeRecording } from './recording.js';

const MS = 1_000_000;
const SERVER = 2;
const START_NS = BigInt(Date.parse('2026-11-29T22:15:04.000Z')) * 1_000_000n;

export interface RequestsEndpoint {
  name: string;
  requests: number;
  /** Request i's CPU by function, milliseconds: each a sample of stack ['main', handler, function]. */
  cpuMs: (i: number) => Record<string, number>;
  /** Request i's duration; default 10 ms. */
  durationMs?: (i: number) => number;
  /**
   * The last `unkept` requests' spans are not in the recording (summarised under load): their
   * samples carry their span ID and `span_name` only, and the totals still count them.
   */
  unkept?: number;
}

export interface RequestsSpec {
  name?: string;
  endpoints: RequestsEndpoint[];
  /** Where functions are (another checkout of the app: the same files at another path). */
  functions?: Record<string, FrameSpec>;
  /** Write the manifest's endpoint totals (as the recorder does); default true. */
  totals?: boolean;
}

/** Writes the recording under baseDir; returns the run folder. Every sample's wall value is its CPU value. */
export function requestsRecording(baseDir: string, spec: RequestsSpec): string {
  const totals = new EndpointTotals();
  const spans: SpanSpec[] = [];
  const cpu: SampleSpec[] = [];
  let n = 0;
  for (const endpoint of spec.endpoints) {
    const handler = `handle ${endpoint.name}`;
    for (let i = 0; i < endpoint.requests; i++) {
      const id = ++n;
      const durationNs = Math.round((endpoint.durationMs?.(i) ?? 10) * MS);
      totals.add(endpoint.name, SERVER, durationNs, false);
      if (i < endpoint.requests - (endpoint.unkept ?? 0)) {
        spans.push({
          spanId: spanIdOf(id),
          traceId: traceIdOf(id),
          name: endpoint.name,
          startNs: START_NS + BigInt(id) * 20n * BigInt(MS),
          durationNs,
          profiled: true,
        });
      }
      const span = { spanId: spanIdOf(id), spanName: endpoint.name, traceId: traceIdOf(id) };
      for (const [fn, ms] of Object.entries(endpoint.cpuMs(i))) if (ms > 0) cpu.push({ stack: ['main', handler, fn], value: Math.round(ms * MS), span });
    }
  }
  return writeRecording(baseDir, {
    name: spec.name,
    service: 'shop',
    functions: spec.functions,
    windows: [{ cpu, wall: cpu }],
    spanBatches: [spans],
    manifest: spec.totals === false ? {} : { endpoints: totals.list() },
  });
}

/** Request i's share of its endpoint's mean, spread from 0.6 to 1.4 (mean 1) over every 100 requests. */
export const jitter = (i: number) => 0.6 + (0.8 * ((i * 7919) % 100)) / 99;

/** The example shop's checkout, in the mean: priceCart 2 ms a request (times `pricing`: 1.3 is 30% slower), applyDiscounts 1 ms. */
export const checkout = (requests: number, pricing = 1): RequestsEndpoint => ({
  name: 'POST /checkout',
  requests,
  cpuMs: (i) => ({ priceCart: 2 * pricing * jitter(i), applyDiscounts: jitter(i) }),
  durationMs: (i) => 10 * jitter(i) + 2 * pricing,
});

/** The example shop's product page, in the mean: recommend 3 ms a request. */
export const products = (requests: number): RequestsEndpoint => ({ name: 'GET /products/:id', requests, cpuMs: (i) => ({ recommend: 3 * jitter(i) }) });
