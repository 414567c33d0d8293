import type { SourceMapper } from '@datadog/pprof/out/src/sourcemapper/sourcemapper.js';
import type { TimeProfile, TimeProfileNode, TimeProfileNodeContext } from '@datadog/pprof/out/src/v8-types.js';
import type { PprofFormat } from './pprof-format.js';
import { PprofTables, type StackFrame, stackOf } from './pprof-tables.js';
import { PROFILE_TYPES, type ProfileType } from './profile-types.js';
import type { Profile, SampleLabels, WindowPart } from './profile-window.js';

export type { Profile };
type Label = InstanceType<PprofFormat['Label']>;
type Sample = InstanceType<PprofFormat['Sample']>;

/** How the samples of one window are turned into pprof. */
export interface TimeBuild {
  /** The sampling interval asked for (µs); the real mean interval is recomputed from the window. */
  intervalMicros: number;
  /** Which profiles to make (cpu, wall). */
  types: readonly ProfileType[];
  /** Who a sample belongs to, from the context the sampler recorded with it; undefined for no one. */
  spanOf(context: TimeProfileNodeContext): SampleLabels | undefined;
  traceIdLabel: boolean;
}

/** The time sampler's part of a window: its raw tree, built into the CPU and wall pprof later. */
export function timePart(raw: TimeProfile, build: TimeBuild): WindowPart {
  const labelled = new Set<SampleLabels>();
  return {
    build: (from, sourceMapper) => buildTimeProfiles(raw, from, build, sourceMapper, labelled),
    contexts: () => contextsOf(raw),
    labelled,
  };
}

function* contextsOf(raw: TimeProfile): Generator<unknown> {
  const pending: TimeProfileNode[] = [raw.topDownRoot];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    for (const { context } of node.contexts ?? []) yield context;
    for (const child of node.children as TimeProfileNode[]) pending.push(child);
  }
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
export function* buildTimeProfiles(raw: TimeProfile, from: number, build: TimeBuild, sourceMapper?: SourceMapper, labelled?: Set<SampleLabels>): Generator<void, Map<ProfileType, Profile>> {
  const tables = new PprofTables(sourceMapper);
  const { Profile, Sample, Label } = tables.format;
  const strings = tables.strings;
  const withCpu = raw.hasCpuTime === true && build.types.includes('cpu');
  const withWall = build.types.includes('wall');
  const cpuSamples: Sample[] = [];
  const wallSamples: Sample[] = [];
  const labelsOfSpan = new Map<SampleLabels, Label[]>();
  const intervalNanos = meanIntervalMicros(raw, build.intervalMicros) * 1000;

  const labelsOf = (span: SampleLabels | undefined): Label[] => {
    if (span === undefined) return [];
    let labels = labelsOfSpan.get(span);
    if (labels === undefined) {
      labels = Object.entries(span.toLabels(build.traceIdLabel)).map(([key, value]) => new Label({ key: strings.dedup(key), str: strings.dedup(value) }));
      labelsOfSpan.set(span, labels);
      labelled?.add(span);
    }
    return labels;
  };

  const emit = (stack: number[], span: SampleLabels | undefined, totals: Totals): void => {
    const label = labelsOf(span);
    if (withCpu && totals.cpu > 0) cpuSamples.push(new Sample({ locationId: stack, value: [totals.count, totals.cpu], label }));
    if (withWall && (totals.count > 0 || totals.wall > 0)) wallSamples.push(new Sample({ locationId: stack, value: [totals.count, totals.wall], label }));
  };

  const visit = (node: TimeProfileNode, frame: StackFrame): void => {
    const idle = node.name === V8_IDLE;
    const perSpan = new Map<SampleLabels, Totals>();
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

  const pending: { node: TimeProfileNode; parent: StackFrame | undefined }[] = topLevel(raw).map((node) => ({ node, parent: undefined }));
  let handled = 0;
  while (pending.length > 0) {
    const { node, parent } = pending.pop()!;
    const frame: StackFrame = { locationId: tables.locationOf(node), parent };
    visit(node, frame);
    for (const child of node.children as TimeProfileNode[]) pending.push({ node: child, parent: frame });
    if (++handled % NODES_PER_STEP === 0) yield;
  }

  const profiles = new Map<ProfileType, Profile>();
  const make = (type: 'cpu' | 'wall', sample: Sample[]) => {
    const info = PROFILE_TYPES[type];
    return new Profile({
      sampleType: info.sampleTypes.map((t) => tables.valueType(t)),
      sample,
      location: tables.locations,
      function: tables.functions,
      stringTable: strings,
      timeNanos: BigInt(from) * 1_000_000n,
      durationNanos: Math.max(0, raw.endTime - raw.startTime) * 1000,
      periodType: tables.valueType(info.periodType),
      period: intervalNanos,
    });
  };
  if (withCpu) profiles.set('cpu', make('cpu', cpuSamples));
  if (withWall) profiles.set('wall', make('wall', wallSamples));
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
