/**
 * What a report shows, computed once from a loaded run: endpoints (local-root spans grouped by
 * name) with their latency and the CPU/wall time their samples took, the slowest spans, flame
 * graph trees and how much of the profile ran inside spans. Pure: the run goes in, plain data
 * comes out (no bigints, ready for JSON). Samples are indexed by their span label once, so the
 * cost grows with samples + spans, not with their product.
 */
import { percentile, percentileNs } from '../util/duration-histogram.js';
import type { EndpointTotal } from '../recording.js';
import { spanNameShapes } from '../span-link/span-name-shape.js';
import { PER_SPAN_TYPES, type PerSpanType, PROFILE_TYPE_NAMES, profileTypeInfo, shownSampleType } from '../profiling/profile-types.js';
import type { LoadedRun, ProfileKind, RunSpan } from './load-run.js';
import { blockFlameTrees, type BlocksSummary, blocksSummary } from './blocks.js';
import { buildFlameTree, everySample, type FlameTree } from './flame-tree.js';
import { formatCount, formatDuration, formatPercent } from './format.js';
import { everyKind, type FrameTable, recordOf, type SampleIndex } from './sample-index.js';
import { buildSpanTree, type SpanTree } from './span-tree.js';
import { type EndpointWaits, endpointWaits } from './waits.js';

export type { FlameTree, ThreadValues } from './flame-tree.js';
export type { FrameTable } from './sample-index.js';
export type { BlockStats, BlocksSummary } from './blocks.js';

/** Per profile type whose samples carry their span (cpu, wall): what endpoints and spans are split by. */
export type PerKind<T> = Record<PerSpanType, T>;

/** A profile type as the page shows it: its name, how its values read, whether it splits by span. */
export interface KindInfo {
  kind: ProfileKind;
  title: string;
  /** `nanoseconds` or `bytes`: how the page formats its values. */
  unit: string;
  perSpan: boolean;
  /** Whether the run holds samples of it. */
  recorded: boolean;
}

/** What a snapshot profile (memory in use) held in its newest window, and where. */
export interface Snapshot {
  kind: ProfileKind;
  title: string;
  unit: string;
  /** The window it was read in (its number in the recording). */
  window: number;
  /** When it is the profile taken as the app hit its heap limit: that time (ISO); else undefined. */
  outOfMemoryAt: string | undefined;
  total: number;
  /** The heaviest functions by self value, at most 10. */
  topSelf: SelfTime[];
}

/** A function's self time: samples whose leaf frame it is. */
export interface SelfTime {
  /** Index into the frame table. */
  frame: number;
  value: number;
  /**
   * For a leaf that is not the app's own code (Node's, a package's, V8's, the agent's): the
   * nearest frame of the app's code above it, whose call it ran for — `writev ← listArticles`.
   * Undefined for an app frame, or when no app frame is on the stack.
   */
  caller?: number;
}

export interface EndpointStats {
  /** Where its requests' time went and what they waited on (waits.ts); undefined when the recording holds none of its requests. */
  waits: EndpointWaits | undefined;
  /** The local-root span name, e.g. `GET /users/:id`. */
  name: string;
  /**
   * Every local root of the endpoint, from the recorder's totals (exact however many spans were
   * kept; p50/p95 then within 4.4%, duration-histogram.ts), else from the spans recorded.
   */
  count: number;
  /** Local roots with an error status. */
  errors: number;
  totalNs: number;
  p50Ns: number;
  p95Ns: number;
  maxNs: number;
  /** cpu/nanoseconds and wall/nanoseconds of the samples labelled with this endpoint's spans. */
  cpuNs: number;
  wallNs: number;
  /** The heaviest functions by CPU self time, at most 3. */
  topSelf: SelfTime[];
  /** Its CPU by whose code ran (the app, each package, Node.js, V8, pyro-run): the leaf frames' owners, heaviest first. */
  byOwner: { owner: string; value: number }[];
}

export interface SlowSpan {
  spanId: string;
  traceId: string;
  name: string;
  /** Index into `endpoints` of the span's local root. */
  endpoint: number;
  /** Epoch milliseconds. */
  startMs: number;
  durationNs: number;
  cpuNs: number;
  wallNs: number;
  route: string | undefined;
  statusCode: number | undefined;
}

/** How a kind's samples split between inside spans (labelled) and outside. */
export interface SampleShare {
  insideSamples: number;
  outsideSamples: number;
  inside: number;
  outside: number;
  /** Part of `inside` labelled with a span the recording does not hold (dropped, or not ended yet). */
  unmatched: number;
}

export interface RunInfo {
  dir: string;
  service: string;
  pid: number | undefined;
  command: string[];
  startedAt: string | undefined;
  endedAt: string | null;
  complete: boolean;
  pyroRunVersion: string;
  nodeVersion: string;
  windows: number;
  /** Spans whose details the recording holds. */
  spans: number;
  /** Spans that ended: those held, those the cap or the disk dropped, those summarised into the endpoint totals. */
  spansEnded: number;
  droppedWindows: number;
  droppedSpans: number;
  summarizedSpans: number;
  /**
   * What the recording holds less of than the app did, in one line for the summary and the page
   * ("spans: 3,592 of 1,666,024 kept; …"); undefined when it holds everything.
   */
  partial: string | undefined;
  /** What the samples in spans the recording does not hold are, in words ("in spans whose details were not kept"). */
  unmatchedWords: string;
  /** Profiled time per kind (sum of window durations). */
  profiledNs: PerKind<number>;
  /**
   * CPU the process spent on threads that run no JavaScript (libuv's pool: crypto, zlib, fs, dns;
   * V8's GC helpers; native add-ons), nanoseconds, against the process's whole: not attributed to
   * requests. Undefined when the profiles hold none.
   */
  otherThreadsCpu: { cpuNs: number; processCpuNs: number; words: string } | undefined;
}

/** A thread's part of the run's profile (RunAggregates.threads). */
export interface ThreadStats {
  /** Its `thread_name`: `main`, a worker's `name` option, else `worker <threadId>`. */
  name: string;
  cpuNs: number;
  wallNs: number;
}

export interface FlameTrees {
  /** Every profile type, per-span or not. */
  process: Record<ProfileKind, FlameTree>;
  /** Parallel to `endpoints`. */
  endpoints: PerKind<FlameTree>[];
  /** Parallel to `slowest`. */
  slowest: PerKind<FlameTree>[];
  /** Parallel to `endpoints`: the flame graph of the request its waterfall shows, null when none. */
  requests: (PerKind<FlameTree> | null)[];
  /** Parallel to `blocks.list`: each event-loop block's own samples. */
  blocks: PerKind<FlameTree>[];
}

export interface RunAggregates {
  run: RunInfo;
  /** Function names and file names; frames point into it. */
  strings: string[];
  frames: FrameTable;
  /** Heaviest CPU first. */
  endpoints: EndpointStats[];
  /** Longest first. */
  slowest: SlowSpan[];
  share: PerKind<SampleShare>;
  /** Every profile type of the table, in its order. */
  kinds: KindInfo[];
  /** The snapshot profiles the run holds (memory in use when the heap profile was on). */
  snapshots: Snapshot[];
  /**
   * Each thread's CPU and wall time, parallel to the trees' `threads`: the main thread first, then
   * the workers by name. Only when the run has more than one thread.
   */
  threads?: ThreadStats[];
  /** The event-loop blocks (docs/event-loop-blocks.md); absent when the recording did not watch them. */
  blocks?: BlocksSummary;
  /** Absent when aggregated with `trees: false`. */
  trees?: FlameTrees;
}

export interface AggregateOptions {
  /** How many of the slowest profiled spans to list; default 50. */
  slowest?: number;
  /** Build flame graph trees (default true); a text summary does not need them. */
  trees?: boolean;
}

export const DEFAULT_SLOWEST = 50;
const TOP_SELF = 3;
const TOP_SNAPSHOT = 10;

/** The run with its samples indexed: everything the per-view functions below need. */
export interface RunModel {
  run: LoadedRun;
  index: SampleIndex;
  spanTree: SpanTree;
  /** Span index of each label, -1 when the recording has no such span. */
  labelSpan: Int32Array;
  /** Endpoint names, their totals (when recorded) and their recorded local-root span indices, heaviest CPU first. */
  endpoints: { name: string; total: EndpointTotal | undefined; roots: number[] }[];
  /** Endpoint index of each local-root span, -1 for other spans. */
  rootEndpoint: Int32Array;
  /** Endpoint index of each label, -1 when unmatched. */
  labelEndpoint: Int32Array;
  /** Labels of each endpoint. */
  endpointLabels: number[][];
  /** Sample rows of each label, per kind. */
  rowsByLabel: PerKind<number[][]>;
}

const sum = (values: readonly number[], rows: readonly number[]): number => rows.reduce((acc, row) => acc + (values[row] as number), 0);

function rowsPerLabel(index: SampleIndex, kind: PerSpanType): number[][] {
  const rows: number[][] = index.labels.spanId.map(() => []);
  index.samples[kind].label.forEach((label, row) => {
    if (label >= 0) (rows[label] as number[]).push(row);
  });
  return rows;
}

interface EndpointGroup {
  name: string;
  total: EndpointTotal | undefined;
  roots: number[];
  labels: number[];
  cpu: number;
  wall: number;
}

/** OTLP SpanKind of the spans that take a request or a message from outside: SERVER, CONSUMER. */
const ENTRY_KINDS: ReadonlySet<number> = new Set([2, 5]);

/**
 * Endpoints, heaviest CPU first (then wall, then count): the order of the table and the summary.
 * An endpoint is the local roots of one name's shape (`process order {id}`: span-name-shape.ts):
 * from the recorder's totals, which count every one,
 * else from the roots recorded. Endpoints are the roots that took a request or a message (SERVER,
 * CONSUMER): a framework's internal work at start-up (Next.js loading a route module, a
 * `dns.lookup`) is no endpoint. A run that took none (a script, a batch job) has its local roots as
 * endpoints. A sample belongs to the endpoint of its span's local root; when the recording does
 * not hold that span (not kept under load, or not ended), to the endpoint its `span_name` label
 * names — so no endpoint loses CPU to the keeping rule.
 */
function groupEndpoints(run: LoadedRun, spanTree: SpanTree, labelSpan: Int32Array, rowsByLabel: PerKind<number[][]>): EndpointGroup[] {
  const totals = run.manifest.endpoints;
  const isRoot = (i: number) => spanTree.root[i] === i;
  const kinds = totals ? totals.map((total) => total.kind) : run.spans.filter((_, i) => isRoot(i)).map((span) => span.kind);
  const entriesOnly = kinds.some((kind) => ENTRY_KINDS.has(kind));
  const counts = (kind: number) => !entriesOnly || ENTRY_KINDS.has(kind);
  const byKey = new Map<string, EndpointGroup>();
  const byName = new Map<string, EndpointGroup>();
  // With totals, an endpoint is a name and a kind; without, a name.
  const keyOf = (name: string, kind: number) => (totals ? `${kind} ${name}` : name);
  const groupFor = (name: string, kind: number, total?: EndpointTotal) => {
    const key = keyOf(name, kind);
    let group = byKey.get(key);
    if (group === undefined) {
      byKey.set(key, (group = { name, total, roots: [], labels: [], cpu: 0, wall: 0 }));
      if (!byName.has(name)) byName.set(name, group);
    }
    return group;
  };
  for (const total of totals ?? []) if (counts(total.kind)) groupFor(total.name, total.kind, total);
  const groupOfRoot = new Map<number, EndpointGroup>();
  run.spans.forEach((span, i) => {
    if (!isRoot(i) || !counts(span.kind)) return;
    // By the name's shape, as the recorder counts them and the samples are labelled (span-name-shape.ts).
    const name = spanNameShapes.of(span.name);
    const group = totals ? byKey.get(keyOf(name, span.kind)) : groupFor(name, span.kind);
    if (group === undefined) return;
    group.roots.push(i);
    groupOfRoot.set(i, group);
  });
  const { cpu, wall } = run.samples.samples;
  labelSpan.forEach((span, label) => {
    const group = span >= 0 ? groupOfRoot.get(spanTree.root[span] as number) : byName.get(run.samples.labels.spanName[label] ?? '');
    if (group === undefined) return;
    group.labels.push(label);
    group.cpu += sum(cpu.value, rowsByLabel.cpu[label] as number[]);
    group.wall += sum(wall.value, rowsByLabel.wall[label] as number[]);
  });
  const countOf = (group: EndpointGroup) => group.total?.count ?? group.roots.length;
  return [...byKey.values()].sort((x, y) => y.cpu - x.cpu || y.wall - x.wall || countOf(y) - countOf(x) || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
}

/** Indexes a loaded run: samples by label, labels to spans and endpoints, endpoints ordered by CPU. */
export function modelRun(run: LoadedRun): RunModel {
  const index = run.samples;
  const spanTree = buildSpanTree(run.spans);
  const labelSpan = Int32Array.from(index.labels.spanId, (id) => spanTree.byId.get(id) ?? -1);
  const rowsByLabel = perKind((kind) => rowsPerLabel(index, kind));
  const groups = groupEndpoints(run, spanTree, labelSpan, rowsByLabel);
  const endpoints = groups.map(({ name, total, roots }) => ({ name, total, roots }));
  const rootEndpoint = new Int32Array(run.spans.length).fill(-1);
  const labelEndpoint = new Int32Array(labelSpan.length).fill(-1);
  groups.forEach(({ roots, labels }, e) => {
    for (const root of roots) rootEndpoint[root] = e;
    for (const label of labels) labelEndpoint[label] = e;
  });
  const endpointLabels = groups.map(({ labels }) => labels);
  return { run, index, spanTree, labelSpan, endpoints, rootEndpoint, labelEndpoint, endpointLabels, rowsByLabel };
}

/** Sample rows of an endpoint: those labelled with any span whose local root is one of its spans. */
export function endpointRows(model: RunModel, endpoint: number, kind: PerSpanType): number[] {
  const rows: number[] = [];
  for (const label of model.endpointLabels[endpoint] ?? []) {
    for (const row of model.rowsByLabel[kind][label] as number[]) rows.push(row);
  }
  return rows;
}

/**
 * Sample rows of each target span's subtree: labelled with the span itself or a descendant below
 * it within the same local root. One walk up from each labelled span serves all targets.
 */
export function spanRows(model: RunModel, targets: readonly number[], kind: PerSpanType): number[][] {
  const slot = new Map<number, number>(targets.map((span, i) => [span, i]));
  const out: number[][] = targets.map(() => []);
  const { parent, root } = model.spanTree;
  model.labelSpan.forEach((span, label) => {
    for (let node = span; node >= 0; node = parent[node] as number) {
      const i = slot.get(node);
      if (i !== undefined) for (const row of model.rowsByLabel[kind][label] as number[]) (out[i] as number[]).push(row);
      if (root[node] === node) break;
    }
  });
  return out;
}

export function processFlameTree(model: RunModel, kind: ProfileKind): FlameTree {
  const columns = model.index.samples[kind];
  return buildFlameTree(model.index, columns, everySample(columns));
}

export function endpointFlameTree(model: RunModel, endpoint: number, kind: PerSpanType): FlameTree {
  return buildFlameTree(model.index, model.index.samples[kind], endpointRows(model, endpoint, kind));
}

/** The flame tree of one span (by index into run.spans) and everything under it. */
export function spanFlameTree(model: RunModel, span: number, kind: PerSpanType): FlameTree {
  return buildFlameTree(model.index, model.index.samples[kind], spanRows(model, [span], kind)[0] as number[]);
}

function endpointStats(model: RunModel): EndpointStats[] {
  const { index } = model;
  const waits = endpointWaits(model, (spans) => cpuOfSpans(model, spans));
  const stats = model.endpoints.map(({ name, total, roots }, e): EndpointStats => {
    const common = { name, cpuNs: 0, wallNs: 0, topSelf: [] as SelfTime[], byOwner: [] as EndpointStats['byOwner'], waits: waits[e] };
    if (total) {
      const { count, errors, totalNs, maxNs, histogram } = total;
      return { ...common, count, errors, totalNs, p50Ns: percentileNs(histogram, 50, maxNs), p95Ns: percentileNs(histogram, 95, maxNs), maxNs };
    }
    const spans = roots.map((i) => model.run.spans[i] as RunSpan);
    const durations = spans.map((span) => span.durationNs).sort((a, b) => a - b);
    return {
      ...common,
      count: roots.length,
      errors: spans.filter((span) => span.error).length,
      totalNs: durations.reduce((a, b) => a + b, 0),
      p50Ns: percentile(durations, 50),
      p95Ns: percentile(durations, 95),
      maxNs: durations[durations.length - 1] ?? 0,
    };
  });
  model.labelEndpoint.forEach((e, label) => {
    const entry = stats[e];
    if (entry === undefined) return;
    entry.cpuNs += sum(index.samples.cpu.value, model.rowsByLabel.cpu[label] as number[]);
    entry.wallNs += sum(index.samples.wall.value, model.rowsByLabel.wall[label] as number[]);
  });
  stats.forEach((entry, e) => {
    const rows = endpointRows(model, e, 'cpu');
    entry.topSelf = topSelfOf(index, 'cpu', rows, TOP_SELF);
    entry.byOwner = byOwnerOf(index, rows);
  });
  return stats;
}

/**
 * CPU of each of `spans`: of its subtree on the main thread, of its subtree on workers, and of the
 * samples labelled with the span itself.
 */
function cpuOfSpans(model: RunModel, spans: readonly number[]): { main: number[]; workers: number[]; own: number[] } {
  const { value, thread, label } = model.index.samples.cpu;
  const subtree = spanRows(model, spans, 'cpu');
  const main = subtree.map((rows) => rows.reduce((n, row) => (thread[row] === 0 ? n + (value[row] as number) : n), 0));
  const workers = subtree.map((rows) => rows.reduce((n, row) => (thread[row] === 0 ? n : n + (value[row] as number)), 0));
  const own = subtree.map((rows, i) => rows.reduce((n, row) => (model.labelSpan[label[row] as number] === spans[i] ? n + (value[row] as number) : n), 0));
  return { main, workers, own };
}

function slowestSpans(model: RunModel, limit: number): number[] {
  const { spans } = model.run;
  return spans
    .map((_, i) => i)
    .filter((i) => model.spanTree.profiled[i])
    .sort((a, b) => (spans[b] as RunSpan).durationNs - (spans[a] as RunSpan).durationNs || a - b)
    .slice(0, limit);
}

function sampleShare(model: RunModel, kind: PerSpanType): SampleShare {
  const { value, label } = model.index.samples[kind];
  const share: SampleShare = { insideSamples: 0, outsideSamples: 0, inside: 0, outside: 0, unmatched: 0 };
  label.forEach((l, row) => {
    const v = value[row] as number;
    if (l < 0) {
      share.outsideSamples++;
      share.outside += v;
      return;
    }
    share.insideSamples++;
    share.inside += v;
    if ((model.labelSpan[l] as number) < 0) share.unmatched += v;
  });
  return share;
}

/** RunInfo.partial. */
export function partialText(
  counts: { spans: number; droppedSpans: number; summarizedSpans: number; droppedWindows: number; thinnedWindows: number },
  totalsRecorded: boolean,
): string | undefined {
  const parts: string[] = [];
  const ended = counts.spans + counts.droppedSpans + counts.summarizedSpans;
  if (ended > counts.spans) {
    const why = [
      counts.summarizedSpans > 0 ? `${formatCount(counts.summarizedSpans)} summarised under load` : '',
      counts.droppedSpans > 0 ? `${formatCount(counts.droppedSpans)} past the size cap or a full disk` : '',
    ].filter((text) => text !== '');
    const cover = totalsRecorded ? 'endpoint counts and percentiles cover all' : 'endpoint counts and percentiles cover the kept ones only';
    parts.push(`spans: ${formatCount(counts.spans)} of ${formatCount(ended)} kept (${why.join(', ')}); ${cover}`);
  }
  if (counts.thinnedWindows > 0)
    parts.push(
      `profile windows: ${formatCount(counts.thinnedWindows)} merged into older ones to fit the size cap (their samples keep their endpoint, not their span)`,
    );
  if (counts.droppedWindows > 0) parts.push(`profile windows: ${formatCount(counts.droppedWindows)} dropped at the size cap or a full disk`);
  return parts.length > 0 ? parts.join('; ') : undefined;
}

function runInfo(model: RunModel): RunInfo {
  const { run, index } = model;
  const { manifest } = run;
  return {
    dir: run.dir,
    service: manifest.service,
    pid: manifest.pid,
    command: manifest.command,
    startedAt: manifest.startedAt,
    endedAt: manifest.endedAt,
    complete: manifest.complete,
    pyroRunVersion: manifest.pyroRunVersion,
    nodeVersion: manifest.nodeVersion,
    windows: index.windows,
    spans: run.spans.length,
    spansEnded: run.spans.length + manifest.counts.droppedSpans + manifest.counts.summarizedSpans,
    droppedWindows: manifest.counts.droppedWindows,
    droppedSpans: manifest.counts.droppedSpans,
    summarizedSpans: manifest.counts.summarizedSpans,
    partial: partialText({ ...manifest.counts, spans: run.spans.length }, manifest.endpoints !== undefined),
    unmatchedWords:
      manifest.counts.summarizedSpans + manifest.counts.droppedSpans > 0 ? 'in spans whose details were not kept' : 'in spans not in the recording',
    profiledNs: perKind((kind) => index.durationNs[kind]),
    otherThreadsCpu: otherThreadsCpu(index, manifest.processCpuNs),
  };
}

/** The pseudo-frame @datadog/pprof puts the CPU of the process's other threads under (its CPU time profile, `Non JS threads activity`). */
const NON_JS_THREADS = 'Non JS threads activity';

/**
 * The CPU the process spent on its threads that run no JavaScript — which the sampler counts under
 * NON_JS_THREADS, never in a span — against the process's CPU (run.json's, else all the CPU samples').
 */
function otherThreadsCpu(index: SampleIndex, processCpuNs: number | undefined): RunInfo['otherThreadsCpu'] {
  const { stack, value } = index.samples.cpu;
  const marked = new Set(index.frames.name.flatMap((name, frame) => (index.strings[name] === NON_JS_THREADS ? [frame] : [])));
  const memo = new Map<number, number>();
  const isUnder = (node: number) => frameAbove(index, node, (frame) => marked.has(frame), memo) >= 0;
  let cpuNs = 0;
  let sampledNs = 0;
  stack.forEach((node, row) => {
    sampledNs += value[row] as number;
    if (marked.size > 0 && isUnder(node)) cpuNs += value[row] as number;
  });
  const wholeNs = processCpuNs !== undefined && processCpuNs > sampledNs ? processCpuNs : sampledNs;
  if (cpuNs <= 0 || wholeNs <= 0) return undefined;
  const words =
    `CPU on threads that run no JavaScript: ${formatDuration(cpuNs)} of the process's ${formatDuration(wholeNs)} (${formatPercent(cpuNs, wholeNs)}): ` +
    "libuv's pool (crypto such as bcrypt and pbkdf2, zlib, fs, dns), V8's GC helpers, native add-ons; no request's, so not in the endpoints' CPU";
  return { cpuNs, processCpuNs: wholeNs, words };
}

function perKind<T>(make: (kind: PerSpanType) => T): PerKind<T> {
  return recordOf(PER_SPAN_TYPES, make);
}

function kindInfos(index: SampleIndex): KindInfo[] {
  return PROFILE_TYPE_NAMES.map((kind) => {
    const info = profileTypeInfo(kind);
    return { kind, title: info.title, unit: shownSampleType(kind).unit, perSpan: info.perSpan, recorded: index.samples[kind].value.length > 0 };
  });
}

/** CPU of `rows` by the owner of their leaf frame (frame-owner.ts), heaviest first. */
function byOwnerOf(index: SampleIndex, rows: Iterable<number>): { owner: string; value: number }[] {
  const { stack, value } = index.samples.cpu;
  const byOwner = new Map<string, number>();
  for (const row of rows) {
    const frame = index.stackFrame[stack[row] as number] as number;
    const owner = frame < 0 ? '' : (index.strings[index.frames.owner[frame] as number] as string);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + (value[row] as number));
  }
  return [...byOwner].map(([owner, v]) => ({ owner, value: v })).sort((a, b) => b.value - a.value || (a.owner < b.owner ? -1 : 1));
}

/**
 * The nearest frame at or above a trie node that `wanted` picks, -1 when none; `memo` holds the
 * answers per node (one per question), so a walk over many samples visits each node once.
 */
function frameAbove(index: SampleIndex, node: number, wanted: (frame: number) => boolean, memo: Map<number, number>): number {
  const path: number[] = [];
  let found = -1;
  for (let at = node; at > 0; at = index.stackParent[at] as number) {
    const known = memo.get(at);
    if (known !== undefined) {
      found = known;
      break;
    }
    path.push(at);
    const frame = index.stackFrame[at] as number;
    if (wanted(frame)) {
      found = frame;
      break;
    }
  }
  for (const at of path) memo.set(at, found);
  return found;
}

/** The heaviest (leaf frame, app caller) pairs by self value among `rows` of a kind's samples (all of them with `limit` Infinity: the diff compares every one). */
export function topSelfOf(index: SampleIndex, kind: ProfileKind, rows: Iterable<number>, limit: number): SelfTime[] {
  const columns = index.samples[kind];
  const self = new Map<string, SelfTime>();
  const memo = new Map<number, number>();
  const isApp = (frame: number) => index.frames.app[frame] === true;
  for (const row of rows) {
    const node = columns.stack[row] as number;
    const frame = index.stackFrame[node] as number;
    if (frame < 0) continue;
    const caller = isApp(frame) ? -1 : frameAbove(index, index.stackParent[node] as number, isApp, memo);
    const key = `${frame} ${caller}`;
    let entry = self.get(key);
    if (entry === undefined) self.set(key, (entry = caller < 0 ? { frame, value: 0 } : { frame, value: 0, caller }));
    entry.value += columns.value[row] as number;
  }
  return [...self.values()].sort((a, b) => b.value - a.value || a.frame - b.frame || (a.caller ?? -1) - (b.caller ?? -1)).slice(0, limit);
}

/** ThreadStats of every thread, when there are workers; undefined for a main thread alone. */
function threadStats(index: SampleIndex): ThreadStats[] | undefined {
  if (index.threads.length < 2) return undefined;
  const stats = index.threads.map((name): ThreadStats => ({ name, cpuNs: 0, wallNs: 0 }));
  const { cpu, wall } = index.samples;
  cpu.thread.forEach((t, row) => {
    (stats[t] as ThreadStats).cpuNs += cpu.value[row] as number;
  });
  wall.thread.forEach((t, row) => {
    (stats[t] as ThreadStats).wallNs += wall.value[row] as number;
  });
  return stats;
}

function snapshots(model: RunModel): Snapshot[] {
  return PROFILE_TYPE_NAMES.filter((kind) => profileTypeInfo(kind).across === 'latest' && model.index.samples[kind].value.length > 0).map((kind) => {
    const columns = model.index.samples[kind];
    const window = Math.max(...model.run.profiles.filter((profile) => profile.kind === kind).map((profile) => profile.window));
    const { outOfMemory } = model.run.manifest;
    return {
      kind,
      title: profileTypeInfo(kind).title,
      unit: shownSampleType(kind).unit,
      window,
      outOfMemoryAt: outOfMemory?.window === window ? outOfMemory.at : undefined,
      total: columns.value.reduce((a, b) => a + b, 0),
      topSelf: topSelfOf(model.index, kind, columns.stack.keys(), TOP_SNAPSHOT),
    };
  });
}

/** Everything a report shows, from one pass of indexing. */
export function aggregateRun(run: LoadedRun, options: AggregateOptions = {}): RunAggregates {
  const model = modelRun(run);
  const slow = slowestSpans(model, options.slowest ?? DEFAULT_SLOWEST);
  const slowRows = perKind((kind) => spanRows(model, slow, kind));

  const slowest: SlowSpan[] = slow.map((i, position) => {
    const span = run.spans[i] as RunSpan;
    return {
      spanId: span.spanId,
      traceId: span.traceId,
      name: span.name,
      endpoint: model.rootEndpoint[model.spanTree.root[i] as number] as number,
      startMs: Number(span.startNs / 1000n) / 1000,
      durationNs: span.durationNs,
      cpuNs: sum(model.index.samples.cpu.value, slowRows.cpu[position] as number[]),
      wallNs: sum(model.index.samples.wall.value, slowRows.wall[position] as number[]),
      route: span.route,
      statusCode: span.statusCode,
    };
  });

  const aggregates: RunAggregates = {
    run: runInfo(model),
    strings: model.index.strings,
    frames: model.index.frames,
    endpoints: endpointStats(model),
    slowest,
    share: perKind((kind) => sampleShare(model, kind)),
    kinds: kindInfos(model.index),
    snapshots: snapshots(model),
  };
  const threads = threadStats(model.index);
  if (threads !== undefined) aggregates.threads = threads;
  const blocks = blocksSummary(
    run.manifest.blocks,
    run.blocks,
    model.index,
    aggregates.endpoints.map((endpoint) => endpoint.name),
  );
  if (blocks !== undefined) aggregates.blocks = blocks;
  if (options.trees !== false) {
    aggregates.trees = {
      process: everyKind((kind) => processFlameTree(model, kind)),
      endpoints: model.endpoints.map((_, e) => perKind((kind) => endpointFlameTree(model, e, kind))),
      slowest: slow.map((_, position) => perKind((kind) => buildFlameTree(model.index, model.index.samples[kind], slowRows[kind][position] as number[]))),
      requests: aggregates.endpoints.map((endpoint) => {
        const root = endpoint.waits?.waterfall?.root;
        return root === undefined ? null : perKind((kind) => spanFlameTree(model, root, kind));
      }),
      blocks: run.blocks.map((block) => blockFlameTrees(model.index, block, (run.manifest.samplingIntervalMicros ?? 10_000) * 1000)),
    };
  }
  return aggregates;
}
