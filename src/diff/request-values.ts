/**
 * Each endpoint of a run as values per request — its CPU, its wall time on the thread, its latency
 * — for comparing runs of different lengths and loads: a run that took twice the requests spent
 * twice the CPU in total, and only the per-request values, and their spread, say whether a request
 * got dearer. Pure: the run's model in, numbers out.
 */
import type { PerSpanType } from '../profiling/profile-types.js';
import { spanRows, type RunModel } from '../report/aggregate.js';
import { bucketUpperNs, type Histogram } from '../util/duration-histogram.js';

export interface EndpointRequests {
  /** What an endpoint is matched by across runs: its OTLP span kind and its name's shape. */
  key: string;
  name: string;
  /** Index into model.endpoints. */
  endpoint: number;
  /** Requests counted: the recorder's totals (every one), else the local roots the recording holds. */
  requests: number;
  /**
   * Per request, nanoseconds: the samples labelled with it, on every thread (a worker's CPU for a
   * request carries its span). A request no sample fell in counts as 0: the profiler samples every
   * interval, so a short request is mostly 0 and sometimes one interval, and its mean is right over
   * many. Undefined when the run did not record that profile.
   */
  cpu: number[] | undefined;
  wall: number[] | undefined;
  /** Each request's duration, ascending: from the totals' histogram when recorded (within 4.4%), else the spans'. */
  latency: number[];
  /**
   * How many of its requests were in flight at once, on average (at least 1): Little's law over
   * the requests the recording holds — their durations' sum over the time from the first one's
   * start to the last one's end — scaled to every request counted. Requests in flight together
   * wait together (a stall, a burst of load), so their latencies are not independent draws.
   */
  inFlight: number;
}

/** The mean number of `requests` in flight, from the root spans the recording holds of them. */
function inFlightOf(model: RunModel, roots: readonly number[], requests: number): number {
  let first: bigint | undefined;
  let last: bigint | undefined;
  let busyNs = 0;
  for (const i of roots) {
    const span = model.run.spans[i];
    if (span === undefined) continue;
    busyNs += span.durationNs;
    if (first === undefined || span.startNs < first) first = span.startNs;
    if (last === undefined || span.endNs > last) last = span.endNs;
  }
  if (first === undefined || last === undefined || last <= first) return 1;
  return Math.max(1, (busyNs * (requests / roots.length)) / Number(last - first));
}

/** A duration histogram as one value per duration it counted, ascending: its bucket's upper bound, at most `maxNs` (percentileNs's reading). */
function histogramValues(histogram: Histogram, maxNs: number): number[] {
  const values: number[] = [];
  const buckets = Object.keys(histogram)
    .map(Number)
    .sort((a, b) => a - b);
  for (const bucket of buckets) {
    const value = Math.min(bucketUpperNs(bucket), maxNs);
    for (let i = 0; i < (histogram[bucket] as number); i++) values.push(value);
  }
  return values;
}

/**
 * Per endpoint, each request's value of a per-span profile: the requests whose spans the recording
 * holds (their local roots' subtrees, walked once for every endpoint), then the samples whose span
 * it does not hold (summarised under load, or past the size cap: their `span_name` names the
 * endpoint), a request per span ID, then 0 for every other request counted.
 */
function perRequest(model: RunModel, kind: PerSpanType, requests: readonly number[]): number[][] {
  const { value } = model.index.samples[kind];
  const sum = (rows: readonly number[]) => rows.reduce((n, row) => n + (value[row] as number), 0);
  const held = spanRows(
    model,
    model.endpoints.flatMap(({ roots }) => roots),
    kind,
  ).map(sum);
  let next = 0;
  return model.endpoints.map(({ roots }, e) => {
    const values = held.slice(next, (next += roots.length));
    for (const label of model.endpointLabels[e] ?? []) {
      if ((model.labelSpan[label] as number) < 0) values.push(sum(model.rowsByLabel[kind][label] as number[]));
    }
    while (values.length < (requests[e] as number)) values.push(0);
    return values;
  });
}

/** The endpoints of a run with their per-request values, in the model's order. */
export function endpointRequests(model: RunModel): EndpointRequests[] {
  const { spans } = model.run;
  const requests = model.endpoints.map(({ total, roots }) => total?.count ?? roots.length);
  const recorded = (kind: PerSpanType) => model.index.samples[kind].value.length > 0;
  const cpu = recorded('cpu') ? perRequest(model, 'cpu', requests) : undefined;
  const wall = recorded('wall') ? perRequest(model, 'wall', requests) : undefined;
  return model.endpoints.map(({ name, total, roots }, e) => {
    const kind = total?.kind ?? spans[roots[0] as number]?.kind ?? 0;
    const latency = total ? histogramValues(total.histogram, total.maxNs) : roots.map((i) => spans[i]?.durationNs as number).sort((a, b) => a - b);
    const inFlight = inFlightOf(model, roots, requests[e] as number);
    return { key: `${kind} ${name}`, name, endpoint: e, requests: requests[e] as number, cpu: cpu?.[e], wall: wall?.[e], latency, inFlight };
  });
}
