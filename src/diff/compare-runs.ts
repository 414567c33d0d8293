/**
 * Two recordings compared endpoint by endpoint, per request: requests, CPU and wall time per
 * request, p50 and p95 latency, each change judged against the noise (metric-change.ts); for each
 * endpoint that changed beyond it, the functions whose self CPU per request changed most. Endpoints
 * are matched by kind and name's shape, as the report groups them. Pure: two models in, plain data
 * out (the documented JSON of `pyro-run diff --json`).
 */
import type { RunModel } from '../report/aggregate.js';
import { type FunctionDelta, functionDeltas, topFunctions } from './function-deltas.js';
import { type MetricChange, metricChange, type MetricName, METRICS, type NoiseRule, zFor } from './metric-change.js';
import { type EndpointRequests, endpointRequests } from './request-values.js';

export interface RunRef {
  /** The run folder. */
  dir: string;
  service: string;
  startedAt: string | undefined;
  /** Requests of every endpoint. */
  requests: number;
}

export interface EndpointDiff {
  name: string;
  /** In both runs, only in the after run (added), only in the before run (removed). */
  presence: 'both' | 'added' | 'removed';
  /** 0 on the side an endpoint is missing from. */
  requests: { before: number; after: number };
  /** Both runs hold at least NoiseRule.minRequests of its requests: only then is a change judged. */
  judged: boolean;
  /** Any of its metrics changed beyond the noise. */
  beyondNoise: boolean;
  /** In both runs only; a metric neither run recorded a profile for (wall, CPU) is absent. */
  metrics: Partial<Record<MetricName, MetricChange>>;
  /** Beyond the noise only: the functions whose self CPU per request changed most. */
  functions: FunctionDelta[];
}

export interface RunDiff {
  before: RunRef;
  after: RunRef;
  noise: NoiseRule & {
    /** Changes judged in this diff: each interval is widened for all of them at once. */
    comparisons: number;
    /** Standard errors each side of a change its interval spans. */
    z: number;
  };
  /** Beyond the noise first, then the rest by how much CPU per request changed, then added, then removed. */
  endpoints: EndpointDiff[];
}

export interface CompareOptions {
  noise: NoiseRule;
  /** Functions listed per endpoint beyond the noise. */
  topFunctions: number;
}

function runRef(model: RunModel, endpoints: readonly EndpointRequests[]): RunRef {
  const { dir, manifest } = model.run;
  return { dir, service: manifest.service, startedAt: manifest.startedAt, requests: endpoints.reduce((n, e) => n + e.requests, 0) };
}

/** The per-request values both runs hold for `metric`, undefined when either lacks them (no such profile recorded). */
function valuesOf(endpoint: EndpointRequests, metric: MetricName): readonly number[] | undefined {
  const values = metric === 'cpuPerRequest' ? endpoint.cpu : metric === 'wallPerRequest' ? endpoint.wall : endpoint.latency;
  return values !== undefined && values.length > 0 ? values : undefined;
}

const comparable = (before: EndpointRequests, after: EndpointRequests): MetricName[] =>
  METRICS.filter((metric) => valuesOf(before, metric) !== undefined && valuesOf(after, metric) !== undefined);

const isJudged = (before: EndpointRequests, after: EndpointRequests, noise: NoiseRule): boolean =>
  before.requests >= noise.minRequests && after.requests >= noise.minRequests;

/** An endpoint both runs have; its changes judged with `z` when both hold enough requests. */
function bothRuns(
  before: EndpointRequests,
  after: EndpointRequests,
  models: { before: RunModel; after: RunModel },
  options: CompareOptions,
  z: number,
): EndpointDiff {
  const { noise } = options;
  const judged = isJudged(before, after, noise);
  const metrics: Partial<Record<MetricName, MetricChange>> = {};
  for (const metric of comparable(before, after)) {
    metrics[metric] = metricChange(
      valuesOf(before, metric) as readonly number[],
      valuesOf(after, metric) as readonly number[],
      metric,
      before.key,
      noise,
      judged ? z : undefined,
      Math.max(before.inFlight, after.inFlight),
    );
  }
  const beyondNoise = Object.values(metrics).some((metric) => metric.beyondNoise);
  const functions =
    beyondNoise && metrics.cpuPerRequest !== undefined
      ? topFunctions(
          functionDeltas(
            { model: models.before, endpoint: before.endpoint, requests: before.requests },
            { model: models.after, endpoint: after.endpoint, requests: after.requests },
          ),
          options.topFunctions,
        )
      : [];
  return { name: after.name, presence: 'both', requests: { before: before.requests, after: after.requests }, judged, beyondNoise, metrics, functions };
}

function oneRun(endpoint: EndpointRequests, presence: 'added' | 'removed'): EndpointDiff {
  const requests = presence === 'added' ? { before: 0, after: endpoint.requests } : { before: endpoint.requests, after: 0 };
  return { name: endpoint.name, presence, requests, judged: false, beyondNoise: false, metrics: {}, functions: [] };
}

/** How much an endpoint's CPU per request changed, for ordering: relative, a change from 0 the largest. */
function cpuChange(endpoint: EndpointDiff): number {
  const cpu = endpoint.metrics.cpuPerRequest;
  if (cpu === undefined) return 0;
  return cpu.relativeChange === null ? (cpu.change === 0 ? 0 : Infinity) : Math.abs(cpu.relativeChange);
}

const PRESENCE_ORDER = { both: 0, added: 1, removed: 2 } as const;

/**
 * The endpoints of two runs matched by key: those in both (before, after), those only after has,
 * those only before has. Each side's `endpoint` index and `requests` are what any per-request view
 * of the two profiles needs: the function deltas, and a diff flame graph alike (each side's
 * endpointFlameTree over its requests).
 */
export function pairEndpoints(
  a: readonly EndpointRequests[],
  b: readonly EndpointRequests[],
): { pairs: (readonly [EndpointRequests, EndpointRequests])[]; added: EndpointRequests[]; removed: EndpointRequests[] } {
  const byKey = new Map(a.map((endpoint) => [endpoint.key, endpoint]));
  const pairs = b.flatMap((endpoint) => {
    const was = byKey.get(endpoint.key);
    return was === undefined ? [] : [[was, endpoint] as const];
  });
  const matched = new Set(pairs.map(([, endpoint]) => endpoint.key));
  return { pairs, added: b.filter((endpoint) => !byKey.has(endpoint.key)), removed: a.filter((endpoint) => !matched.has(endpoint.key)) };
}

/**
 * Each side's endpoint, parallel to RunDiff.endpoints (undefined on the side it is missing from):
 * what a view of the two profiles per request needs besides the numbers, the diff page's flame
 * graphs.
 */
export interface EndpointSides {
  before: EndpointRequests | undefined;
  after: EndpointRequests | undefined;
}

/** compareRuns, with each endpoint's sides. */
export function compareRunsWithSides(before: RunModel, after: RunModel, options: CompareOptions): { diff: RunDiff; sides: EndpointSides[] } {
  const a = endpointRequests(before);
  const b = endpointRequests(after);
  const { pairs, added, removed } = pairEndpoints(a, b);
  // Every change judged widens every interval: count them before judging any.
  const comparisons = pairs.reduce((n, [was, is]) => n + (isJudged(was, is, options.noise) ? comparable(was, is).length : 0), 0);
  const z = zFor(options.noise.confidence, comparisons);
  const entries: { endpoint: EndpointDiff; sides: EndpointSides }[] = [
    ...pairs.map(([was, is]) => ({ endpoint: bothRuns(was, is, { before, after }, options, z), sides: { before: was, after: is } })),
    ...added.map((endpoint) => ({ endpoint: oneRun(endpoint, 'added'), sides: { before: undefined, after: endpoint } })),
    ...removed.map((endpoint) => ({ endpoint: oneRun(endpoint, 'removed'), sides: { before: endpoint, after: undefined } })),
  ];
  entries.sort(
    ({ endpoint: x }, { endpoint: y }) =>
      PRESENCE_ORDER[x.presence] - PRESENCE_ORDER[y.presence] ||
      Number(y.beyondNoise) - Number(x.beyondNoise) ||
      cpuChange(y) - cpuChange(x) ||
      y.requests.after + y.requests.before - (x.requests.after + x.requests.before) ||
      (x.name < y.name ? -1 : x.name > y.name ? 1 : 0),
  );
  const diff = {
    before: runRef(before, a),
    after: runRef(after, b),
    noise: { ...options.noise, comparisons, z },
    endpoints: entries.map(({ endpoint }) => endpoint),
  };
  return { diff, sides: entries.map(({ sides }) => sides) };
}

export function compareRuns(before: RunModel, after: RunModel, options: CompareOptions): RunDiff {
  return compareRunsWithSides(before, after, options).diff;
}
