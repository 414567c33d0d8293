/**
 * Where an endpoint's request time went, from the requests the recording holds whole (their local
 * root and the spans under it): on-CPU on the app's thread and on workers (the profile samples
 * labelled with the request), and waiting on the calls it made — the CLIENT and PRODUCER spans under
 * it, by what they called (a database, an HTTP service, anything else). What those calls were,
 * aggregated per endpoint: how many per request, their time, the statements or URLs that took the
 * most, and a statement run again and again in one request (the N+1 pattern). And, for the slowest
 * request, its spans as a waterfall. Pure: the model in, plain data out.
 */
import { sanitizeSql } from '../tracing/db-statements.js';
import { percentile } from '../util/duration-histogram.js';
import { spanNameShapes } from '../span-link/span-name-shape.js';
import type { RunSpan } from './otlp-spans.js';
import type { SpanTree } from './span-tree.js';

/** The slice of a run's model the waits are computed from. */
export interface WaitsInput {
  run: { spans: readonly RunSpan[] };
  spanTree: SpanTree;
  /** Each endpoint's recorded local roots (indices into run.spans). */
  endpoints: readonly { roots: readonly number[] }[];
}

/** CPU of each span given: its subtree's on the main thread and on workers, and its own samples'. */
export type CpuOfSpans = (spans: readonly number[]) => { main: number[]; workers: number[]; own: number[] };

export type CallCategory = 'database' | 'http' | 'other';

/** One kind of call an endpoint's requests make: a statement's shape, `GET host`, a span name. */
export interface CallStats {
  category: CallCategory;
  text: string;
  /** Calls in all the requests analysed. */
  count: number;
  /** Calls per request (requests that made none count as 0). */
  perRequestP50: number;
  perRequestMax: number;
  totalNs: number;
  p95Ns: number;
  /** Made REPEATED_CALLS times or more in one request. */
  repeated: boolean;
}

/** A span of the waterfall: where it starts after the request did, how long, its own CPU. */
export interface WaterfallSpan {
  name: string;
  /** Index into run.spans (the page asks for its flame graph by it). */
  span: number;
  depth: number;
  category: CallCategory | 'request' | 'internal';
  offsetNs: number;
  durationNs: number;
  /** CPU of the samples labelled with this span itself (a request's children carry none unless every span labels its own work). */
  cpuNs: number;
}

export interface Waterfall {
  /** Index into run.spans of the request's local root. */
  root: number;
  durationNs: number;
  spans: WaterfallSpan[];
  /** Spans under the request beyond the ones listed. */
  more: number;
}

export interface EndpointWaits {
  /** Requests analysed: the endpoint's local roots the recording holds. */
  requests: number;
  /** Means per request, nanoseconds. */
  durationNs: number;
  /** On the app's main thread. */
  cpuNs: number;
  /** On worker threads, for this request. */
  workerCpuNs: number;
  /** Covered by database calls, by HTTP calls, by other calls (each the union of its calls' time). */
  databaseNs: number;
  httpNs: number;
  otherCallsNs: number;
  /** Neither on CPU nor in a call: the event loop's queue, timers, waits no span shows. */
  restNs: number;
  databaseCallsP50: number;
  databaseCallsMax: number;
  /** The heaviest kinds of call by total time, at most TOP_CALLS. */
  calls: CallStats[];
  /** Of those flagged repeated, the one made the most times in one request: what the summary and the page call out. */
  repeated: CallStats | undefined;
  waterfall: Waterfall | undefined;
}

/** A call made this many times in one request is flagged: the same statement in a loop. */
export const REPEATED_CALLS = 5;
const TOP_CALLS = 10;
const WATERFALL_SPANS = 150;
const STATEMENT_CHARS = 300;
/** OTLP SpanKind of a call the request waits on: CLIENT, PRODUCER. */
const CALL_KINDS: ReadonlySet<number> = new Set([3, 4]);

function categoryOf(span: RunSpan): CallCategory {
  if (span.dbSystem !== undefined) return 'database';
  if (span.httpMethod !== undefined) return 'http';
  return 'other';
}

/** What calls of one kind share: a statement's shape, a method and host, a name's shape. */
function callText(span: RunSpan, category: CallCategory): string {
  if (category === 'database' && span.statement !== undefined) {
    const shape = sanitizeSql(span.statement).replace(/\s+/g, ' ').trim();
    return shape.length > STATEMENT_CHARS ? `${shape.slice(0, STATEMENT_CHARS)}…` : shape;
  }
  if (category === 'http') return `${span.httpMethod} ${span.serverAddress ?? spanNameShapes.of(span.name)}`;
  return spanNameShapes.of(span.name);
}

/** Total length of the union of intervals [start, end), nanoseconds. */
function unionNs(intervals: [number, number][]): number {
  intervals.sort((a, b) => a[0] - b[0]);
  let total = 0;
  let from = -Infinity;
  let to = -Infinity;
  for (const [start, end] of intervals) {
    if (start > to) {
      if (to > from) total += to - from;
      from = start;
      to = end;
    } else if (end > to) to = end;
  }
  if (to > from) total += to - from;
  return total;
}

const mean = (values: readonly number[]): number => (values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length);

interface Call {
  category: CallCategory;
  text: string;
  durationNs: number;
}

/** Per endpoint of the model, its waits (undefined for an endpoint none of whose requests the recording holds). */
export function endpointWaits(model: WaitsInput, cpuOfSpans: CpuOfSpans): (EndpointWaits | undefined)[] {
  const { spans } = model.run;
  const { root, parent } = model.spanTree;
  // The spans under each local root, once.
  const under = new Map<number, number[]>();
  spans.forEach((_, i) => {
    const r = root[i] as number;
    if (r === i) return;
    let list = under.get(r);
    if (list === undefined) under.set(r, (list = []));
    list.push(i);
  });

  // Every endpoint's requests in one pass over the samples (cpuOfSpans walks all of them).
  const cpu = cpuOfSpans(model.endpoints.flatMap(({ roots }) => roots));
  let next = 0;
  const waits = model.endpoints.map(({ roots }): EndpointWaits | undefined => {
    const first = next;
    next += roots.length;
    if (roots.length === 0) return undefined;
    const mainCpu = cpu.main.slice(first, next);
    const workersCpu = cpu.workers.slice(first, next);
    const perRequest = roots.map((r) => {
      const request = spans[r] as RunSpan;
      // Offsets from the request's start: epoch nanoseconds do not fit a number exactly.
      const end = request.durationNs;
      const calls: Call[] = [];
      const covered: Record<CallCategory, [number, number][]> = { database: [], http: [], other: [] };
      for (const i of under.get(r) ?? []) {
        const span = spans[i] as RunSpan;
        if (!CALL_KINDS.has(span.kind)) continue;
        const category = categoryOf(span);
        calls.push({ category, text: callText(span, category), durationNs: span.durationNs });
        const offset = Number(span.startNs - request.startNs);
        const from = Math.max(0, offset);
        const to = Math.min(end, offset + span.durationNs);
        if (to > from) covered[category].push([from, to]);
      }
      return { durationNs: request.durationNs, calls, databaseNs: unionNs(covered.database), httpNs: unionNs(covered.http), otherNs: unionNs(covered.other) };
    });

    const byText = new Map<string, { category: CallCategory; text: string; durations: number[]; perRequest: number[] }>();
    perRequest.forEach(({ calls }, request) => {
      for (const call of calls) {
        const key = `${call.category}\u0000${call.text}`;
        let entry = byText.get(key);
        if (entry === undefined)
          byText.set(key, (entry = { category: call.category, text: call.text, durations: [], perRequest: new Array<number>(roots.length).fill(0) }));
        entry.durations.push(call.durationNs);
        entry.perRequest[request] = (entry.perRequest[request] as number) + 1;
      }
    });
    const calls = [...byText.values()]
      .map(({ category, text, durations, perRequest: counts }): CallStats => {
        const sortedDurations = [...durations].sort((a, b) => a - b);
        const sortedCounts = [...counts].sort((a, b) => a - b);
        const max = sortedCounts[sortedCounts.length - 1] ?? 0;
        return {
          category,
          text,
          count: durations.length,
          perRequestP50: percentile(sortedCounts, 50),
          perRequestMax: max,
          totalNs: durations.reduce((a, b) => a + b, 0),
          p95Ns: percentile(sortedDurations, 95),
          repeated: max >= REPEATED_CALLS,
        };
      })
      .sort((a, b) => b.totalNs - a.totalNs || (a.text < b.text ? -1 : 1))
      .slice(0, TOP_CALLS);

    const databaseCounts = perRequest.map(({ calls: made }) => made.filter((call) => call.category === 'database').length).sort((a, b) => a - b);
    const durationNs = mean(perRequest.map((r) => r.durationNs));
    const cpuNs = mean(mainCpu);
    const databaseNs = mean(perRequest.map((r) => r.databaseNs));
    const httpNs = mean(perRequest.map((r) => r.httpNs));
    const otherCallsNs = mean(perRequest.map((r) => r.otherNs));
    return {
      requests: roots.length,
      durationNs,
      cpuNs,
      workerCpuNs: mean(workersCpu),
      databaseNs,
      httpNs,
      otherCallsNs,
      restNs: Math.max(0, durationNs - cpuNs - databaseNs - httpNs - otherCallsNs),
      databaseCallsP50: percentile(databaseCounts, 50),
      databaseCallsMax: databaseCounts[databaseCounts.length - 1] ?? 0,
      calls,
      repeated: calls.filter((call) => call.repeated).sort((a, b) => b.perRequestMax - a.perRequestMax)[0],
      waterfall: waterfallOf(model, roots, under, parent),
    };
  });
  // The waterfalls' own CPU, in one pass too.
  const shown = waits.flatMap((entry) => entry?.waterfall?.spans ?? []);
  const own = cpuOfSpans(shown.map((span) => span.span)).own;
  shown.forEach((span, i) => {
    span.cpuNs = own[i] as number;
  });
  return waits;
}

/** The slowest of `roots` with the spans under it, in start order, each at its depth (their CPU filled in by the caller). */
function waterfallOf(model: WaitsInput, roots: readonly number[], under: ReadonlyMap<number, number[]>, parent: Int32Array): Waterfall {
  const { spans } = model.run;
  const slowest = roots.reduce((a, b) => ((spans[b] as RunSpan).durationNs > (spans[a] as RunSpan).durationNs ? b : a));
  const request = spans[slowest] as RunSpan;
  const depthOf = (i: number): number => {
    let depth = 0;
    for (let node = i; node !== slowest && node >= 0; node = parent[node] as number) depth++;
    return depth;
  };
  const depth = new Map([slowest, ...(under.get(slowest) ?? [])].map((i) => [i, depthOf(i)]));
  // In start order; a parent before the children that start with it.
  const members = [...depth.keys()].sort(
    (a, b) => Number((spans[a] as RunSpan).startNs - (spans[b] as RunSpan).startNs) || (depth.get(a) as number) - (depth.get(b) as number) || a - b,
  );
  const shown = members.slice(0, WATERFALL_SPANS);
  return {
    root: slowest,
    durationNs: request.durationNs,
    spans: shown.map((i) => {
      const span = spans[i] as RunSpan;
      const category = i === slowest ? 'request' : CALL_KINDS.has(span.kind) ? categoryOf(span) : 'internal';
      return {
        name: span.name,
        span: i,
        depth: depth.get(i) as number,
        category,
        offsetNs: Number(span.startNs - request.startNs),
        durationNs: span.durationNs,
        cpuNs: 0,
      };
    }),
    more: members.length - shown.length,
  };
}
