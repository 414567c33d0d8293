import type { SourceMapper } from '@datadog/pprof/out/src/sourcemapper/sourcemapper.js';
import type { TimeProfile, TimeProfileNode, TimeProfileNodeContext } from '@datadog/pprof/out/src/v8-types.js';
import { ABSENT, IntPairTable, withRoom } from '../util/int-pair-table.js';
import { Interner } from '../util/interner.js';
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
  /**
   * Who a sample belongs to, from the context the sampler recorded with it and when it was taken
   * (microseconds of the monotonic clock, `performance.now()`'s); undefined for no one.
   */
  spanOf(context: TimeProfileNodeContext, sampledAtMicros: number): SampleLabels | undefined;
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

/** Trees given whole (the encoder's warm-up, tests) have their timestamps on the monotonic clock already. */
function foldOf(raws: readonly TimeProfile[], build: TimeBuild): TimeFold {
  const fold = new TimeFold(build);
  for (const raw of raws) fold.add(raw, 0);
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

/** (stack, span) sums made pprof samples between two checks of the time slice (64 stacks took up to 8–11 ms in a cold first window under load). */
const SUMS_PER_STEP = 16;

/** A frame's identity in V8's tree, and what is needed to name it later (PprofTables.locationOf). */
type FrameName = Required<Pick<V8Frame, 'scriptName' | 'scriptId' | 'lineNumber' | 'columnNumber'>> & { name: string };

/** The parent of a stack's first frame. */
const NO_PARENT = -1;
/** The span index of samples that belong to no span. */
const NO_SPAN = 0;
/** No row: the end of a node's list of sums. */
const NONE = -1;

/**
 * The sampler's trees of one window, folded as they come (a gather's tree the moment it is taken):
 * each distinct stack once, with its samples summed per span. The trees themselves are dropped at
 * once and die young; what the window holds grows with its distinct stacks, not with its gathers.
 * Building the pprof (`profiles`) reads the fold and changes nothing in it, so a window can be
 * built twice (at exit, over an async build cut short).
 *
 * The fold lives as long as its window (seconds) and grows all along, so whatever it allocates per
 * stack outlives young-generation collections and is copied and promoted by them; on an app of
 * thousands of functions every request adds new stacks. So stacks and sums are kept in typed arrays
 * (outside V8's heap), indexed through IntPairTable: a stack is a node of a tree, (its parent, its
 * function) → node; a sum is a row, (node, span) → row, listed under its node. Only each distinct
 * function's name and each span are objects, and the spans are the sampler's own contexts, alive
 * anyway.
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
  /** Each distinct function once: its number by identity (script, line, column, name), its name by number. */
  private readonly functionIds = new Interner<string>();
  private readonly functions: FrameName[] = [];
  /** The stacks met, as nodes of a tree: each one's function and parent node (NO_PARENT at the top). */
  private nodeFunction = new Int32Array(256);
  private nodeParent = new Int32Array(256);
  /** Each node's sums, as a list through `rowNext` (NONE while it has none): the pprof keeps a stack's samples together, which its gzip rewards. */
  private nodeFirstRow = new Int32Array(256);
  private nodeLastRow = new Int32Array(256);
  private nodes = 0;
  /** (parent node + 1, function) → node. */
  private readonly children = new IntPairTable();
  /** The nodes with sums, in the order their first sample was met. */
  private sampledNodes = new Int32Array(256);
  private sampled = 0;
  /** The spans samples belong to, numbered; no span (undefined) is the first, NO_SPAN. */
  private readonly spans = new Interner<SampleLabels | undefined>();
  /** The sums, one row per (node, span) with samples: samples (ticks and contexts recorded with CPU time), those of them that stand for wall time (not the thread idling), CPU time; and the node's next row. */
  private rowSpan = new Int32Array(256);
  private rowCount = new Float64Array(256);
  private rowWallCount = new Float64Array(256);
  private rowCpu = new Float64Array(256);
  private rowNext = new Int32Array(256);
  private rows = 0;
  /** (node, span) → row. */
  private readonly rowIds = new IntPairTable();
  private trees = 0;
  private hits = 0;
  private durationMicros = 0;
  private hasCpuTime = false;

  constructor(private readonly build: TimeBuild) {
    this.spans.id(undefined); // NO_SPAN
  }

  /** How many trees were folded in. */
  get size(): number {
    return this.trees;
  }

  /**
   * Folds one tree of the sampler in. Its sample timestamps are epoch microseconds, through the
   * system clock read when it was taken; minus `epochOffsetMicros` (the epoch's lead over the
   * monotonic clock at that moment) they are times of the monotonic clock, which spans' ends are
   * compared with (SpanLabels.covers).
   */
  add(raw: TimeProfile, epochOffsetMicros: number): void {
    this.trees += 1;
    this.hits += raw.totalHitCount ?? countHits(raw.topDownRoot);
    this.durationMicros += Math.max(0, raw.endTime - raw.startTime);
    this.hasCpuTime ||= raw.hasCpuTime === true;
    const pending = topLevel(raw);
    const parents: number[] = pending.map(() => NO_PARENT);
    for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
      const id = this.nodeOf(node, parents.pop()!);
      this.visit(node, id, epochOffsetMicros);
      for (const child of node.children as TimeProfileNode[]) {
        pending.push(child);
        parents.push(id);
      }
    }
  }

  /** The window's part: built into pprof from the fold, as often as asked. */
  part(): WindowPart {
    const labelled = new Set<SampleLabels>();
    return { build: (from, sourceMapper) => this.profiles(from, sourceMapper, labelled), contexts: () => this.spansSampled(), labelled };
  }

  /** The spans the window's samples belong to. */
  private *spansSampled(): Generator<SampleLabels> {
    for (let span = NO_SPAN + 1; span < this.spans.values.length; span++) yield this.spans.values[span]!;
  }

  private functionOf(node: TimeProfileNode): number {
    const id = this.functionIds.id(`${node.scriptId ?? 0}:${node.lineNumber ?? 0}:${node.columnNumber ?? 0}:${node.name ?? ''}`);
    if (id === this.functions.length) {
      this.functions.push({ name: node.name ?? '', scriptName: node.scriptName, scriptId: node.scriptId ?? 0, lineNumber: node.lineNumber ?? 0, columnNumber: node.columnNumber ?? 0 });
    }
    return id;
  }

  private nodeOf(node: TimeProfileNode, parent: number): number {
    const fn = this.functionOf(node);
    let id = this.children.get(parent + 1, fn);
    if (id === ABSENT) {
      id = this.nodes++;
      this.nodeFunction = withRoom(this.nodeFunction, this.nodes);
      this.nodeParent = withRoom(this.nodeParent, this.nodes);
      this.nodeFirstRow = withRoom(this.nodeFirstRow, this.nodes);
      this.nodeLastRow = withRoom(this.nodeLastRow, this.nodes);
      this.nodeFunction[id] = fn;
      this.nodeParent[id] = parent;
      this.nodeFirstRow[id] = NONE;
      this.children.add(parent + 1, fn, id);
    }
    return id;
  }

  private rowOf(node: number, span: number): number {
    let row = this.rowIds.get(node, span);
    if (row === ABSENT) {
      row = this.rows++;
      this.rowSpan = withRoom(this.rowSpan, this.rows);
      this.rowCount = withRoom(this.rowCount, this.rows);
      this.rowWallCount = withRoom(this.rowWallCount, this.rows);
      this.rowCpu = withRoom(this.rowCpu, this.rows);
      this.rowNext = withRoom(this.rowNext, this.rows);
      this.rowSpan[row] = span;
      this.rowNext[row] = NONE;
      if (this.nodeFirstRow[node] === NONE) {
        this.nodeFirstRow[node] = row;
        this.sampledNodes = withRoom(this.sampledNodes, this.sampled + 1);
        this.sampledNodes[this.sampled++] = node;
      } else {
        this.rowNext[this.nodeLastRow[node]!] = row;
      }
      this.nodeLastRow[node] = row;
      this.rowIds.add(node, span, row);
    }
    return row;
  }

  private visit(node: TimeProfileNode, id: number, epochOffsetMicros: number): void {
    const idle = node.name === V8_IDLE;
    let unlabelledHits = node.hitCount;
    let unlabelledCpu = 0;
    for (const context of node.contexts ?? []) {
      const span = this.build.spanOf(context, Number(context.timestamp) - epochOffsetMicros);
      const cpu = context.cpuTime ?? 0;
      if (span === undefined) {
        unlabelledCpu += cpu;
        continue;
      }
      const row = this.rowOf(id, this.spans.id(span));
      // More contexts than hits happen (a context recorded with CPU time for a tick V8 dropped):
      // the extra ones add CPU time only.
      // An idle tick is the thread waiting for work, for no one: not in the wall profile, whatever
      // context was left set when the thread went idle.
      if (unlabelledHits > 0 && !idle) {
        this.rowCount[row]! += 1;
        this.rowWallCount[row]! += 1;
      }
      unlabelledHits--;
      this.rowCpu[row]! += cpu;
    }
    if ((!idle && unlabelledHits > 0) || unlabelledCpu > 0) {
      const hits = Math.max(unlabelledHits, 0);
      const row = this.rowOf(id, NO_SPAN);
      this.rowCount[row]! += hits;
      if (!idle) this.rowWallCount[row]! += hits;
      this.rowCpu[row]! += unlabelledCpu;
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
    const emit = (stack: number[], row: number): void => {
      const label = labelsOf(this.spans.values[this.rowSpan[row]!]);
      const count = this.rowCount[row]!;
      const cpu = this.rowCpu[row]!;
      const wall = this.rowWallCount[row]! * intervalNanos;
      if (withCpu && cpu > 0) cpuSamples.push(new Sample({ locationId: stack, value: [count, cpu], label }));
      if (withWall && (count > 0 || wall > 0)) wallSamples.push(new Sample({ locationId: stack, value: [count, wall], label }));
    };

    const stackFrames = new Array<StackFrame | undefined>(this.nodes);
    const stackFrameOf = (node: number): StackFrame => {
      let stackFrame = stackFrames[node];
      if (stackFrame === undefined) {
        const parent = this.nodeParent[node]!;
        stackFrame = { locationId: tables.locationOf(this.functions[this.nodeFunction[node]!]!), parent: parent === NO_PARENT ? undefined : stackFrameOf(parent) };
        stackFrames[node] = stackFrame;
      }
      return stackFrame;
    };
    let handled = 0;
    for (let i = 0; i < this.sampled; i++) {
      const node = this.sampledNodes[i]!;
      const stack = stackOf(stackFrameOf(node));
      for (let row = this.nodeFirstRow[node]!; row !== NONE; row = this.rowNext[row]!) {
        emit(stack, row);
        if (++handled % SUMS_PER_STEP === 0) yield;
      }
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
