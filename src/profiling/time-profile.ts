import type { SourceMapper } from '@datadog/pprof/out/src/sourcemapper/sourcemapper.js';
import type { TimeProfile, TimeProfileNode, TimeProfileNodeContext } from '@datadog/pprof/out/src/v8-types.js';
import type { PprofFormat } from './pprof-format.js';
import { PprofTables, type StackFrame, stackOf, type V8Frame } from './pprof-tables.js';
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

/**
 * The time sampler's part of a window, from its trees (one per gather, gather-pace.ts, oldest
 * first): folded now, built into the CPU and wall pprof later.
 */
export function timePart(raws: readonly TimeProfile[], build: TimeBuild): WindowPart {
  return foldOf(raws, build).part();
}

/** The CPU and wall pprof of a window's trees (TimeFold: folded, then built in steps). */
export function buildTimeProfiles(raws: readonly TimeProfile[], from: number, build: TimeBuild, sourceMapper?: SourceMapper, labelled?: Set<SampleLabels>): Generator<void, Map<ProfileType, Profile>> {
  return foldOf(raws, build).profiles(from, sourceMapper, labelled);
}

function foldOf(raws: readonly TimeProfile[], build: TimeBuild): TimeFold {
  const fold = new TimeFold(build);
  for (const raw of raws) fold.add(raw);
  return fold;
}

/** V8's names for the frames that are not JavaScript (the root's children in its profile tree). */
const V8_PROGRAM = '(program)';
const V8_IDLE = '(idle)';
const V8_GC = '(garbage collector)';
/** How they are shown, grouped under one runtime frame as @datadog/pprof (and Datadog's UI) does. */
const RUNTIME_FRAME = 'Node.js';
const GC_FRAME = 'Garbage Collection';
const NON_JS_THREADS_FRAME = 'Non JS threads activity';

/** Stacks made pprof samples between two checks of the time slice (64 tree nodes took up to 8–11 ms in a cold first window under load). */
const STACKS_PER_STEP = 16;

interface Totals {
  /** Samples (ticks and contexts recorded with CPU time) … */
  count: number;
  /** … of which ticks that stand for wall time (not the thread idling). */
  wallCount: number;
  cpu: number;
}

/** A frame's identity in V8's tree, and what is needed to name it later (PprofTables.locationOf). */
type FrameName = Required<Pick<V8Frame, 'scriptName' | 'scriptId' | 'lineNumber' | 'columnNumber'>> & { name: string };

/**
 * A stack met in the window's trees, once however many trees hold it: its samples summed per span
 * over the trees.
 */
interface Frame {
  readonly name: FrameName;
  readonly parent: Frame | undefined;
  readonly callees: Map<string, Frame>;
  /** Its samples per span, and those of no span; made when the first sample is met. */
  totals: { perSpan: Map<SampleLabels, Totals>; unlabelled: Totals } | undefined;
}

const newTotals = (): Totals => ({ count: 0, wallCount: 0, cpu: 0 });

/**
 * The sampler's trees of one window, folded as they come (a gather's tree the moment it is taken):
 * each distinct stack once, with its samples summed per span. The trees themselves are dropped at
 * once and die young, instead of waiting in the old generation for the window's build; what the
 * window holds grows with its distinct stacks, not with its gathers. Building the pprof
 * (`profiles`) reads the fold and changes nothing in it, so a window can be built twice (at exit,
 * over an async build cut short).
 *
 * What the sampler records, and what becomes of it (the same as @datadog/pprof's own serializer,
 * whose output Pyroscope's Node SDK sends, except that samples are aggregated):
 * - every tree node has a hit count (wall-clock samples) and, with contexts, one entry per sample
 *   with its context, timestamp and thread CPU time since the previous sample;
 * - a sample belongs to a span when `spanOf` says so; a stack's samples are summed per span over
 *   every tree, so a window has one pprof sample per (stack, span), not one per 10 ms tick;
 * - `(program)` and `(idle)` are dropped (idle: the thread waits for work; CPU time recorded with
 *   an idle tick is kept in the CPU profile);
 *   `(garbage collector)` and the CPU time of threads that run no JavaScript go under a `Node.js`
 *   frame;
 * - the CPU profile holds samples with CPU time, the wall profile samples with hits. Both share
 *   one string table, function and location list.
 */
export class TimeFold {
  private readonly roots = new Map<string, Frame>();
  /** Frames holding samples, in the order first met. */
  private readonly sampled: Frame[] = [];
  private trees = 0;
  private hits = 0;
  private durationMicros = 0;
  private hasCpuTime = false;

  constructor(private readonly build: TimeBuild) {}

  /** How many trees were folded in. */
  get size(): number {
    return this.trees;
  }

  /** Folds one tree of the sampler in. */
  add(raw: TimeProfile): void {
    this.trees += 1;
    this.hits += raw.totalHitCount ?? countHits(raw.topDownRoot);
    this.durationMicros += Math.max(0, raw.endTime - raw.startTime);
    this.hasCpuTime ||= raw.hasCpuTime === true;
    const pending: { node: TimeProfileNode; parent: Frame | undefined }[] = topLevel(raw).map((node) => ({ node, parent: undefined }));
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      const { node, parent } = next;
      const frame = this.frameOf(node, parent);
      this.visit(node, frame);
      for (const child of node.children as TimeProfileNode[]) pending.push({ node: child, parent: frame });
    }
  }

  /** The window's part: built into pprof from the fold, as often as asked. */
  part(): WindowPart {
    const labelled = new Set<SampleLabels>();
    return { build: (from, sourceMapper) => this.profiles(from, sourceMapper, labelled), contexts: () => this.spans(), labelled };
  }

  /** The spans the window's samples belong to. */
  private *spans(): Generator<SampleLabels> {
    const seen = new Set<SampleLabels>();
    for (const frame of this.sampled) {
      for (const span of frame.totals?.perSpan.keys() ?? []) {
        if (!seen.has(span)) {
          seen.add(span);
          yield span;
        }
      }
    }
  }

  private frameOf(node: TimeProfileNode, parent: Frame | undefined): Frame {
    const callees = parent?.callees ?? this.roots;
    const key = `${node.scriptId ?? 0}:${node.lineNumber ?? 0}:${node.columnNumber ?? 0}:${node.name ?? ''}`;
    let frame = callees.get(key);
    if (frame === undefined) {
      const name = { name: node.name ?? '', scriptName: node.scriptName, scriptId: node.scriptId ?? 0, lineNumber: node.lineNumber ?? 0, columnNumber: node.columnNumber ?? 0 };
      callees.set(key, (frame = { name, parent, callees: new Map(), totals: undefined }));
    }
    return frame;
  }

  private totalsOf(frame: Frame): NonNullable<Frame['totals']> {
    if (frame.totals === undefined) {
      frame.totals = { perSpan: new Map(), unlabelled: newTotals() };
      this.sampled.push(frame);
    }
    return frame.totals;
  }

  private visit(node: TimeProfileNode, frame: Frame): void {
    const idle = node.name === V8_IDLE;
    let unlabelledHits = node.hitCount;
    let unlabelledCpu = 0;
    for (const context of node.contexts ?? []) {
      const span = this.build.spanOf(context);
      const cpu = context.cpuTime ?? 0;
      if (span === undefined) {
        unlabelledCpu += cpu;
        continue;
      }
      const { perSpan } = this.totalsOf(frame);
      let totals = perSpan.get(span);
      if (totals === undefined) perSpan.set(span, (totals = newTotals()));
      // More contexts than hits happen (a context recorded with CPU time for a tick V8 dropped):
      // the extra ones add CPU time only.
      // An idle tick is the thread waiting for work, for no one: not in the wall profile, whatever
      // context was left set when the thread went idle.
      if (unlabelledHits > 0 && !idle) {
        totals.count++;
        totals.wallCount++;
      }
      unlabelledHits--;
      totals.cpu += cpu;
    }
    if ((!idle && unlabelledHits > 0) || unlabelledCpu > 0) {
      const hits = Math.max(unlabelledHits, 0);
      const { unlabelled } = this.totalsOf(frame);
      unlabelled.count += hits;
      if (!idle) unlabelled.wallCount += hits;
      unlabelled.cpu += unlabelledCpu;
    }
  }

  /**
   * The CPU and wall pprof of the window, as a generator that yields every few dozen stacks, so the
   * caller can spread the work over several turns of the event loop (`runSliced`) or run it through
   * at exit (`runNow`), slices.ts. Span names are read now, when the window is built (an HTTP span
   * learns its route after it started); `labelled` receives whom samples were labelled for.
   */
  *profiles(from: number, sourceMapper?: SourceMapper, labelled?: Set<SampleLabels>): Generator<void, Map<ProfileType, Profile>> {
    const { build } = this;
    const tables = new PprofTables(sourceMapper);
    const { Profile, Sample, Label } = tables.format;
    const strings = tables.strings;
    const withCpu = this.hasCpuTime && build.types.includes('cpu');
    const withWall = build.types.includes('wall');
    const cpuSamples: Sample[] = [];
    const wallSamples: Sample[] = [];
    const labelsOfSpan = new Map<SampleLabels, Label[]>();
    const intervalNanos = meanIntervalMicros(this.hits, this.durationMicros, build.intervalMicros) * 1000;

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
      const wall = totals.wallCount * intervalNanos;
      if (withCpu && totals.cpu > 0) cpuSamples.push(new Sample({ locationId: stack, value: [totals.count, totals.cpu], label }));
      if (withWall && (totals.count > 0 || wall > 0)) wallSamples.push(new Sample({ locationId: stack, value: [totals.count, wall], label }));
    };

    const locations = new Map<Frame, StackFrame>();
    const stackFrameOf = (frame: Frame): StackFrame => {
      let stackFrame = locations.get(frame);
      if (stackFrame === undefined) {
        stackFrame = { locationId: tables.locationOf(frame.name), parent: frame.parent && stackFrameOf(frame.parent) };
        locations.set(frame, stackFrame);
      }
      return stackFrame;
    };
    let handled = 0;
    for (const frame of this.sampled) {
      const stack = stackOf(stackFrameOf(frame));
      const { perSpan, unlabelled } = frame.totals!;
      for (const [span, totals] of perSpan) emit(stack, span, totals);
      emit(stack, undefined, unlabelled);
      if (++handled % STACKS_PER_STEP === 0) yield;
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
        durationNanos: this.durationMicros * 1000,
        periodType: tables.valueType(info.periodType),
        period: intervalNanos,
      });
    };
    if (withCpu) profiles.set('cpu', make('cpu', cpuSamples));
    if (withWall) profiles.set('wall', make('wall', wallSamples));
    return profiles;
  }
}

/**
 * The mean time between samples: V8 samples less often than asked under load (12.5 ms for 10 ms),
 * and a sample stands for the time since the previous one. Bounded to [asked, 2 × asked] so that a
 * window with a handful of hits does not get an absurd weight.
 */
function meanIntervalMicros(hits: number, durationMicros: number, askedMicros: number): number {
  if (hits <= 0) return askedMicros;
  return Math.min(Math.max(Math.floor(durationMicros / hits), askedMicros), 2 * askedMicros);
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
