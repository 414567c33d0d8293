import type { SourceMapper } from '@datadog/pprof/out/src/sourcemapper/sourcemapper.js';
import type { TimeProfile, TimeProfileNode, TimeProfileNodeContext } from '@datadog/pprof/out/src/v8-types.js';
import type { ProfileType } from '../config.js';
import type { SpanLabels } from '../span-link/labels.js';
import { SAMPLE_TYPE_COUNT, SAMPLE_TYPE_CPU, SAMPLE_TYPE_WALL } from '../wire.js';

import { type PprofFormat, type Profile, pprofFormat } from './pprof-format.js';

export type { Profile };
type Label = InstanceType<PprofFormat['Label']>;

/** How the samples of one window are turned into pprof. */
export interface WindowBuild {
  /** The sampling interval asked for (µs); the real mean interval is recomputed from the window. */
  intervalMicros: number;
  /** Which profiles to make. */
  types: readonly ProfileType[];
  /** The span a sample belongs to, from the context the sampler recorded with it; undefined for none. */
  spanOf(context: TimeProfileNodeContext): SpanLabels | undefined;
  traceIdLabel: boolean;
  /** Maps compiled frames back to their sources (TypeScript file and line), when the app has maps. */
  sourceMapper?: SourceMapper | undefined;
}

/** V8's names for the frames that are not JavaScript (the root's children in its profile tree). */
const V8_PROGRAM = '(program)';
const V8_IDLE = '(idle)';
const V8_GC = '(garbage collector)';
/** How they are shown, grouped under one runtime frame as @datadog/pprof (and Datadog's UI) does. */
const RUNTIME_FRAME = 'Node.js';
const GC_FRAME = 'Garbage Collection';
const NON_JS_THREADS_FRAME = 'Non JS threads activity';

/** Tree nodes handled between two checks of the time slice (64 took up to 8–11 ms in a cold first window under load). */
const NODES_PER_STEP = 16;

interface Totals {
  count: number;
  wall: number;
  cpu: number;
}

interface Frame {
  locationId: number;
  parent: Frame | undefined;
}

/**
 * The CPU and wall pprof of a window, built from the sampler's tree as a generator that yields
 * every few dozen tree nodes, so the caller can spread the work over several turns of the event
 * loop (`runSliced`) or run it through at exit (`runNow`), slices.ts.
 *
 * What the sampler records, and what becomes of it (the same as @datadog/pprof's own serializer,
 * whose output Pyroscope's Node SDK sends, except that samples are aggregated):
 * - every tree node has a hit count (wall-clock samples) and, with contexts, one entry per sample
 *   with its context, timestamp and thread CPU time since the previous sample;
 * - a sample belongs to a span when `spanOf` says so; the node's samples are summed per span, so a
 *   window has one pprof sample per (stack, span), not one per 10 ms tick;
 * - `(program)` and `(idle)` are dropped (idle: the thread waits for work; CPU time recorded with
 *   an idle tick is kept in the CPU profile);
 *   `(garbage collector)` and the CPU time of threads that run no JavaScript go under a `Node.js`
 *   frame;
 * - the CPU profile holds samples with CPU time, the wall profile samples with hits. Both share
 *   one string table, function and location list.
 */
export function* buildWindowProfiles(raw: TimeProfile, from: number, build: WindowBuild): Generator<void, Map<ProfileType, Profile>> {
  const { Profile, StringTable, Function: PprofFunction, Location, Line, Sample, Label, ValueType } = pprofFormat();
  const strings = new StringTable();
  const functions: InstanceType<PprofFormat['Function']>[] = [];
  const locations: InstanceType<PprofFormat['Location']>[] = [];
  const functionIds = new Map<string, number>();
  const locationIds = new Map<string, number>();
  const withCpu = raw.hasCpuTime === true && build.types.includes('cpu');
  const withWall = build.types.includes('wall');
  const cpuSamples: InstanceType<PprofFormat['Sample']>[] = [];
  const wallSamples: InstanceType<PprofFormat['Sample']>[] = [];
  const labelsOfSpan = new Map<SpanLabels, Label[]>();
  const intervalNanos = meanIntervalMicros(raw, build.intervalMicros) * 1000;

  const functionId = (name: string, file: string, scriptId: number, line: number, column: number): number => {
    const key = name ? `${scriptId}:${name}:${line}` : `${scriptId}:${line}:${column}`;
    let id = functionIds.get(key);
    if (id === undefined) {
      const shown = name || (line ? (column ? `(anonymous:L#${line}:C#${column})` : `(anonymous:L#${line})`) : '(anonymous)');
      const nameId = strings.dedup(shown);
      id = functions.length + 1;
      // V8 gives a profile node the line its function starts at (mapped, with source maps).
      functions.push(new PprofFunction({ id, name: nameId, systemName: nameId, filename: strings.dedup(file), startLine: line }));
      functionIds.set(key, id);
    }
    return id;
  };

  const locationId = (node: TimeProfileNode): number => {
    const scriptName = node.scriptName.startsWith('file://') ? node.scriptName.slice(7) : node.scriptName;
    let file = scriptName;
    let name = node.name ?? '';
    let line = node.lineNumber ?? 0;
    let column = node.columnNumber ?? 0;
    if (build.sourceMapper && line > 0 && node.columnNumber !== undefined) {
      const mapped = build.sourceMapper.mappingInfo({ file, line, column, name });
      file = mapped.file ?? file;
      name = mapped.name ?? name;
      line = mapped.line ?? line;
      column = mapped.column ?? column;
    }
    const scriptId = node.scriptId ?? 0;
    const key = `${scriptId}:${line}:${column}:${name}`;
    let id = locationIds.get(key);
    if (id === undefined) {
      id = locations.length + 1;
      locations.push(new Location({ id, line: [new Line({ functionId: functionId(name, file, scriptId, line, column), line })] }));
      locationIds.set(key, id);
    }
    return id;
  };

  const labelsOf = (span: SpanLabels | undefined): Label[] => {
    if (span === undefined) return [];
    let labels = labelsOfSpan.get(span);
    if (labels === undefined) {
      labels = Object.entries(span.toLabels(build.traceIdLabel)).map(([key, value]) => new Label({ key: strings.dedup(key), str: strings.dedup(value) }));
      labelsOfSpan.set(span, labels);
    }
    return labels;
  };

  const emit = (stack: number[], span: SpanLabels | undefined, totals: Totals): void => {
    const label = labelsOf(span);
    if (withCpu && totals.cpu > 0) cpuSamples.push(new Sample({ locationId: stack, value: [totals.count, totals.cpu], label }));
    if (withWall && (totals.count > 0 || totals.wall > 0)) wallSamples.push(new Sample({ locationId: stack, value: [totals.count, totals.wall], label }));
  };

  const visit = (node: TimeProfileNode, frame: Frame): void => {
    const idle = node.name === V8_IDLE;
    const perSpan = new Map<SpanLabels, Totals>();
    let unlabelledHits = node.hitCount;
    let unlabelledCpu = 0;
    for (const context of node.contexts ?? []) {
      const span = build.spanOf(context);
      const cpu = context.cpuTime ?? 0;
      if (span === undefined) {
        unlabelledCpu += cpu;
        continue;
      }
      let totals = perSpan.get(span);
      if (totals === undefined) perSpan.set(span, (totals = { count: 0, wall: 0, cpu: 0 }));
      // More contexts than hits happen (a context recorded with CPU time for a tick V8 dropped):
      // the extra ones add CPU time only.
      // An idle tick is the thread waiting for work, for no one: not in the wall profile, whatever
      // context was left set when the thread went idle.
      if (unlabelledHits > 0 && !idle) {
        totals.count++;
        totals.wall += intervalNanos;
      }
      unlabelledHits--;
      totals.cpu += cpu;
    }
    if (perSpan.size === 0 && unlabelledCpu === 0 && (idle || unlabelledHits <= 0)) return;
    const stack = stackOf(frame);
    for (const [span, totals] of perSpan) emit(stack, span, totals);
    if ((!idle && unlabelledHits > 0) || unlabelledCpu > 0) {
      const hits = Math.max(unlabelledHits, 0);
      emit(stack, undefined, { count: hits, wall: idle ? 0 : hits * intervalNanos, cpu: unlabelledCpu });
    }
  };

  const pending: { node: TimeProfileNode; parent: Frame | undefined }[] = topLevel(raw).map((node) => ({ node, parent: undefined }));
  let handled = 0;
  while (pending.length > 0) {
    const { node, parent } = pending.pop()!;
    const frame: Frame = { locationId: locationId(node), parent };
    visit(node, frame);
    for (const child of node.children as TimeProfileNode[]) pending.push({ node: child, parent: frame });
    if (++handled % NODES_PER_STEP === 0) yield;
  }

  const profiles = new Map<ProfileType, Profile>();
  const make = (metric: { type: string; unit: string }, sample: InstanceType<PprofFormat['Sample']>[]) => {
    const valueType = (v: { type: string; unit: string }) => new ValueType({ type: strings.dedup(v.type), unit: strings.dedup(v.unit) });
    const metricType = valueType(metric);
    return new Profile({
      sampleType: [valueType(SAMPLE_TYPE_COUNT), metricType],
      sample,
      location: locations,
      function: functions,
      stringTable: strings,
      timeNanos: BigInt(from) * 1_000_000n,
      durationNanos: Math.max(0, raw.endTime - raw.startTime) * 1000,
      periodType: metricType,
      period: intervalNanos,
    });
  };
  if (withCpu) profiles.set('cpu', make(SAMPLE_TYPE_CPU, cpuSamples));
  if (withWall) profiles.set('wall', make(SAMPLE_TYPE_WALL, wallSamples));
  return profiles;
}

/**
 * The mean time between samples: V8 samples less often than asked under load (12.5 ms for 10 ms),
 * and a sample stands for the time since the previous one. Bounded to [asked, 2 × asked] so that a
 * window with a handful of hits does not get an absurd weight.
 */
function meanIntervalMicros(raw: TimeProfile, askedMicros: number): number {
  const hits = raw.totalHitCount ?? countHits(raw.topDownRoot);
  if (hits <= 0) return askedMicros;
  return Math.min(Math.max(Math.floor((raw.endTime - raw.startTime) / hits), askedMicros), 2 * askedMicros);
}

function countHits(node: TimeProfileNode): number {
  let hits = node.hitCount;
  for (const child of node.children as TimeProfileNode[]) hits += countHits(child);
  return hits;
}

/** The root's children as shown: V8's pseudo-frames dropped or grouped under the runtime frame. */
function topLevel(raw: TimeProfile): TimeProfileNode[] {
  const out: TimeProfileNode[] = [];
  const runtime: TimeProfileNode[] = [];
  for (const child of raw.topDownRoot.children as TimeProfileNode[]) {
    if (child.name === V8_PROGRAM) continue;
    if (child.name === V8_IDLE && (child.contexts?.length ?? 0) === 0) continue;
    if (child.name === V8_GC) runtime.push({ ...child, name: GC_FRAME });
    else out.push(child);
  }
  if (raw.hasCpuTime && raw.nonJSThreadsCpuTime) {
    runtime.push(syntheticNode(NON_JS_THREADS_FRAME, [], [{ timestamp: 0n, cpuTime: raw.nonJSThreadsCpuTime }]));
  }
  if (runtime.length > 0) out.push(syntheticNode(RUNTIME_FRAME, runtime));
  return out;
}

function syntheticNode(name: string, children: TimeProfileNode[], contexts: TimeProfileNodeContext[] = []): TimeProfileNode {
  return { name, scriptName: '', scriptId: 0, lineNumber: 0, columnNumber: 0, hitCount: 0, children, contexts };
}

function stackOf(frame: Frame): number[] {
  const stack: number[] = [];
  for (let f: Frame | undefined = frame; f !== undefined; f = f.parent) stack.push(f.locationId);
  return stack;
}
