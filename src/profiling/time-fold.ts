import type { TimeProfile, TimeProfileNode, TimeProfileNodeContext } from '@datadog/pprof/out/src/v8-types.js';
import { ABSENT, IntPairTable, withRoom } from '../util/int-pair-table.js';
import { Interner } from '../util/interner.js';
import type { FoldShipment, ShippedLabels } from './fold-shipment.js';
import { type StackFrame, stackOf, type V8Frame } from './pprof-tables.js';
import type { SampleLabels } from './profile-window.js';

/**
 * Who a sample belongs to, from the context the sampler recorded with it and when it was taken
 * (microseconds of the monotonic clock, `performance.now()`'s); undefined for no one.
 */
export type SpanOf = (context: TimeProfileNodeContext, sampledAtMicros: number) => SampleLabels | undefined;
/** Whose work ran between two ticks (monotonic microseconds), as the thread recorded it; undefined when it cannot say. */
export type WorkBetween = (fromMicros: number, toMicros: number) => SampleLabels | undefined;

/** V8's names for the frames that are not JavaScript (the root's children in its profile tree). */
const V8_PROGRAM = '(program)';
const V8_IDLE = '(idle)';
const V8_GC = '(garbage collector)';
/** How they are shown, grouped under one runtime frame as @datadog/pprof (and Datadog's UI) does. */
const RUNTIME_FRAME = 'Node.js';
const GC_FRAME = 'Garbage Collection';
const NON_JS_THREADS_FRAME = 'Non JS threads activity';
/** The frame of CPU time spent for a span between two samples, neither of which saw it: where it ran is not known. */
export const WORK_BETWEEN_SAMPLES = '(between samples)';

/** A frame's identity in V8's tree, and what is needed to name it later (PprofTables.locationOf). */
export type FrameName = Required<Pick<V8Frame, 'scriptName' | 'scriptId' | 'lineNumber' | 'columnNumber'>> & { name: string };

/** The parent of a stack's first frame. */
const NO_PARENT = -1;
/** The span index of samples that belong to no span. */
const NO_SPAN = 0;
/** No row: the end of a node's list of sums. */
const NONE = -1;

/** One (stack, span) sum of a fold, as `TimeFold.sums` hands it over. */
export interface FoldSum {
  /** The stack's frames, leaf first, as PprofTables location ids. */
  stack: number[];
  span: SampleLabels | undefined;
  /** Samples (ticks, and contexts recorded with CPU time). */
  count: number;
  /** Those of them that stand for wall time (not the thread idling). */
  wallCount: number;
  /** CPU time, nanoseconds. */
  cpu: number;
}

/**
 * The sampler's trees of one thread's window, folded as they come (a gather's tree the moment it is
 * taken): each distinct stack once, with its samples summed per span. The trees themselves are
 * dropped at once and die young; what the window holds grows with its distinct stacks, not with its
 * gathers. Reading the fold (`sums`) changes nothing in it, so a window can be built twice (at exit,
 * over an async build cut short).
 *
 * The fold lives as long as its window (seconds) and grows all along, so whatever it allocates per
 * stack outlives young-generation collections and is copied and promoted by them; on an app of
 * thousands of functions every request adds new stacks. So stacks and sums are kept in typed arrays
 * (outside V8's heap), indexed through IntPairTable: a stack is a node of a tree, (its parent, its
 * function) → node; a sum is a row, (node, span) → row, listed under its node. Only each distinct
 * function's name and each span are objects, and the spans are the sampler's own contexts, alive
 * anyway.
 *
 * A worker thread's fold is shipped to the main thread (`toShipment`, typed arrays that cross by
 * copy) and added there to that thread's fold of the main thread's window (`addShipment`).
 *
 * What the sampler records, and what becomes of it (the same as @datadog/pprof's own serializer,
 * whose output Pyroscope's Node SDK sends, except that samples are aggregated):
 * - every tree node has a hit count (wall-clock samples) and, with contexts, one entry per sample
 *   with its context, timestamp and thread CPU time since the previous sample;
 * - a sample belongs to a span when `spanOf` says so; a stack's samples are summed per span over
 *   every tree, so a window has one pprof sample per (stack, span), not one per 10 ms tick;
 * - `(program)` and `(idle)` are dropped (idle: the thread waits for work); the CPU time recorded
 *   with such a tick right after a busy one goes to the busy one's stack and span
 *   (`inTimeOrder`), other idle ticks' is kept in the CPU profile;
 *   `(garbage collector)` and the CPU time of threads that run no JavaScript go under a `Node.js`
 *   frame; a collection V8 ran as a task of its own, outside any span's context, goes to the work
 *   that ran before it where the thread says whose that was (a worker's messages, `inTimeOrder`).
 */
export class TimeFold {
  /** Each distinct function once: its number by identity (script, line, column, name), its name by number. */
  private readonly functionIds = new Interner<string>();
  private readonly functions: FrameName[] = [];
  /** The stacks met, as nodes of a tree: each one's function and parent node (NO_PARENT at the top). A parent is always met before its children. */
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
  /** The last tick folded (epoch µs), and its row if it was busy (not idle, not `(program)`): where the next idle tick's CPU time goes (inTimeOrder). */
  private lastTickMicros = 0;
  private lastBusyRow = NONE;
  /** Ticks the sampler took, and the time its trees covered: the mean interval between samples (`meanIntervalMicros`). */
  private hits = 0;
  private covered = 0;
  private cpuTimed = false;

  /** `workBetween`: whose work ran between two ticks (monotonic µs), where the thread knows. */
  constructor(
    private readonly spanOf: SpanOf,
    private readonly workBetween?: WorkBetween,
  ) {
    this.spans.id(undefined); // NO_SPAN
  }

  /** How many trees (or shipments of them) were folded in. */
  get size(): number {
    return this.trees;
  }

  /** The time the fold's trees covered, microseconds. */
  get durationMicros(): number {
    return this.covered;
  }

  /** Whether its samples carry CPU time. */
  get hasCpuTime(): boolean {
    return this.cpuTimed;
  }

  /**
   * The mean time between samples, microseconds: V8 samples less often than asked under load
   * (12.5 ms for 10 ms), and a sample stands for the time since the previous one. Bounded to
   * [asked, 2 × asked] so that a window with a handful of hits does not get an absurd weight.
   */
  meanIntervalMicros(askedMicros: number): number {
    if (this.hits <= 0) return askedMicros;
    return Math.min(Math.max(Math.floor(this.covered / this.hits), askedMicros), 2 * askedMicros);
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
    this.covered += Math.max(0, raw.endTime - raw.startTime);
    this.cpuTimed ||= raw.hasCpuTime === true;
    const samples: number[] = [];
    for (const child of raw.topDownRoot.children as TimeProfileNode[]) {
      if (child.name === V8_PROGRAM) for (const context of child.contexts ?? []) samples.push(Number(context.timestamp), QUIET, context.cpuTime ?? 0, NONE, 0);
    }
    const pending = topLevel(raw);
    const parents: number[] = pending.map(() => NO_PARENT);
    for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
      const id = this.nodeOf(node, parents.pop()!);
      this.visit(node, id, epochOffsetMicros, samples);
      for (const child of node.children as TimeProfileNode[]) {
        pending.push(child);
        parents.push(id);
      }
    }
    this.inTimeOrder(samples, epochOffsetMicros);
  }

  /** The spans the fold's samples belong to. */
  *spansSampled(): Generator<SampleLabels> {
    for (let span = NO_SPAN + 1; span < this.spans.values.length; span++) yield this.spans.values[span]!;
  }

  /**
   * What the fold holds, as a thread hands it to the main thread: typed arrays and strings only,
   * its spans by their labels (so the span's name is the one it has now).
   */
  toShipment(): FoldShipment {
    const functions = this.functions;
    const spans: (ShippedLabels | null)[] = this.spans.values.map((span) => (span === undefined ? null : span.toLabels(true)));
    const rowNode = new Int32Array(this.rows);
    for (let i = 0; i < this.sampled; i++) {
      const node = this.sampledNodes[i]!;
      for (let row = this.nodeFirstRow[node]!; row !== NONE; row = this.rowNext[row]!) rowNode[row] = node;
    }
    return {
      functions: {
        name: functions.map((f) => f.name),
        scriptName: functions.map((f) => f.scriptName),
        scriptId: Int32Array.from(functions, (f) => f.scriptId),
        line: Int32Array.from(functions, (f) => f.lineNumber),
        column: Int32Array.from(functions, (f) => f.columnNumber),
      },
      nodeFunction: this.nodeFunction.slice(0, this.nodes),
      nodeParent: this.nodeParent.slice(0, this.nodes),
      rowNode,
      rowSpan: this.rowSpan.slice(0, this.rows),
      rowCount: this.rowCount.slice(0, this.rows),
      rowWallCount: this.rowWallCount.slice(0, this.rows),
      rowCpu: this.rowCpu.slice(0, this.rows),
      spans,
      trees: this.trees,
      hits: this.hits,
      durationMicros: this.covered,
      hasCpuTime: this.cpuTimed,
    };
  }

  /**
   * Adds what another thread's fold held (`toShipment`): its functions, stacks and sums, its spans
   * as `spanOfLabels` names them here. The shipments of one thread go into one fold: function
   * identities (the script ids) are that thread's.
   */
  addShipment(shipment: FoldShipment, spanOfLabels: (labels: ShippedLabels) => SampleLabels | undefined): void {
    const { functions: f } = shipment;
    const functionMap = new Int32Array(f.name.length);
    for (let i = 0; i < functionMap.length; i++) {
      functionMap[i] = this.functionOf({
        name: f.name[i]!,
        scriptName: f.scriptName[i]!,
        scriptId: f.scriptId[i]!,
        lineNumber: f.line[i]!,
        columnNumber: f.column[i]!,
      });
    }
    const nodeMap = new Int32Array(shipment.nodeFunction.length);
    for (let i = 0; i < nodeMap.length; i++) {
      const parent = shipment.nodeParent[i]!;
      nodeMap[i] = this.nodeOfFunction(functionMap[shipment.nodeFunction[i]!]!, parent === NO_PARENT ? NO_PARENT : nodeMap[parent]!);
    }
    const spanMap = shipment.spans.map((labels) => this.spans.id(labels === null ? undefined : spanOfLabels(labels)));
    for (let i = 0; i < shipment.rowNode.length; i++) {
      const row = this.rowOf(nodeMap[shipment.rowNode[i]!]!, spanMap[shipment.rowSpan[i]!]!);
      this.rowCount[row]! += shipment.rowCount[i]!;
      this.rowWallCount[row]! += shipment.rowWallCount[i]!;
      this.rowCpu[row]! += shipment.rowCpu[i]!;
    }
    this.trees += shipment.trees;
    this.hits += shipment.hits;
    this.covered += shipment.durationMicros;
    this.cpuTimed ||= shipment.hasCpuTime;
  }

  /**
   * Every (stack, span) sum, a stack's sums together, yielding every `perStep` sums so the caller
   * can spread the work over turns of the event loop. `locationOf` names a frame in the pprof
   * being built.
   */
  *sums(locationOf: (frame: FrameName) => number, emit: (sum: FoldSum) => void, perStep: number): Generator<void> {
    const stackFrames = new Array<StackFrame | undefined>(this.nodes);
    const stackFrameOf = (node: number): StackFrame => {
      let stackFrame = stackFrames[node];
      if (stackFrame === undefined) {
        const parent = this.nodeParent[node]!;
        stackFrame = { locationId: locationOf(this.functions[this.nodeFunction[node]!]!), parent: parent === NO_PARENT ? undefined : stackFrameOf(parent) };
        stackFrames[node] = stackFrame;
      }
      return stackFrame;
    };
    let handled = 0;
    for (let i = 0; i < this.sampled; i++) {
      const node = this.sampledNodes[i]!;
      const stack = stackOf(stackFrameOf(node));
      for (let row = this.nodeFirstRow[node]!; row !== NONE; row = this.rowNext[row]!) {
        emit({ stack, span: this.spans.values[this.rowSpan[row]!], count: this.rowCount[row]!, wallCount: this.rowWallCount[row]!, cpu: this.rowCpu[row]! });
        if (++handled % perStep === 0) yield;
      }
    }
  }

  private functionOf(frame: FrameName): number {
    const id = this.functionIds.id(`${frame.scriptId}:${frame.lineNumber}:${frame.columnNumber}:${frame.name}`);
    if (id === this.functions.length) this.functions.push(frame);
    return id;
  }

  private nodeOf(node: TimeProfileNode, parent: number): number {
    const fn = this.functionOf({
      name: node.name ?? '',
      scriptName: node.scriptName,
      scriptId: node.scriptId ?? 0,
      lineNumber: node.lineNumber ?? 0,
      columnNumber: node.columnNumber ?? 0,
    });
    return this.nodeOfFunction(fn, parent);
  }

  private nodeOfFunction(fn: number, parent: number): number {
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

  private visit(node: TimeProfileNode, id: number, epochOffsetMicros: number, samples: number[]): void {
    const idle = node.name === V8_IDLE;
    // A collection outside any span's context, where the thread says whose work ran when: whose it
    // is depends on the ticks around it (inTimeOrder).
    const collectionAfterWork = this.workBetween !== undefined && V8_COLLECTIONS.has(node);
    let unlabelledHits = node.hitCount;
    let unlabelledCpu = 0;
    let unlabelledRow = NONE;
    for (const context of node.contexts ?? []) {
      const span = this.spanOf(context, Number(context.timestamp) - epochOffsetMicros);
      const cpu = context.cpuTime ?? 0;
      if (span === undefined && collectionAfterWork) {
        samples.push(Number(context.timestamp), COLLECTION, cpu, id, unlabelledHits > 0 ? 1 : 0);
        unlabelledHits--;
        continue;
      }
      if (span === undefined) {
        unlabelledCpu += cpu;
        // An idle tick without CPU time moves nothing: it needs no row.
        if (!idle || cpu > 0) unlabelledRow = unlabelledRow === NONE ? this.rowOf(id, NO_SPAN) : unlabelledRow;
        if (idle) samples.push(Number(context.timestamp), QUIET, cpu, cpu > 0 ? unlabelledRow : NONE, 0);
        else samples.push(Number(context.timestamp), BUSY, 0, unlabelledRow, 0);
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
      samples.push(Number(context.timestamp), idle ? QUIET : BUSY, cpu, row, 0);
    }
    if ((!idle && unlabelledHits > 0) || unlabelledCpu > 0) {
      const hits = Math.max(unlabelledHits, 0);
      const row = unlabelledRow === NONE ? this.rowOf(id, NO_SPAN) : unlabelledRow;
      this.rowCount[row]! += hits;
      if (!idle) this.rowWallCount[row]! += hits;
      this.rowCpu[row]! += unlabelledCpu;
    }
  }

  /**
   * One tree's ticks in time order (the tree groups them by stack; their timestamps order them),
   * the last tick of a tree carrying over to the next tree.
   *
   * The CPU time of an idle tick, or of a `(program)` one (native code, no JavaScript on the
   * stack), is what the thread used since the tick before. When that tick was busy in JavaScript,
   * it is the end of that work (a worker's task, a request's last callback) on the thread's way to
   * waiting, not the waiting: it goes to the busy sample's row. When it was not, the work ran whole
   * between two ticks (a task shorter than the sampling interval): it goes to the span of the work
   * `workBetween` says ran then, under a frame of its own, WORK_BETWEEN_SAMPLES. Else it stays
   * where it was (an idle tick's on the idle frame, a `(program)` tick's nowhere).
   *
   * A garbage collection outside any span's context, in a thread that says whose work ran when,
   * is one V8 ran as a task of its own (`--trace-gc`: `task`), most often a scavenge it put off
   * until the JavaScript running returned, because that code's allocations filled the young
   * generation. It goes to the span of the work `workBetween` says ran since the tick before, as a
   * collection started inside that work carries its span (@datadog/pprof keeps the context a
   * collection started in); with none, it stays unlabelled. It is a busy tick for the idle tick
   * after it.
   */
  private inTimeOrder(samples: number[], epochOffsetMicros: number): void {
    const order = Array.from({ length: samples.length / STRIDE }, (_, i) => i * STRIDE).sort(
      (a, b) => samples[a]! - samples[b]! || samples[a + 1]! - samples[b + 1]!,
    );
    for (const i of order) {
      const at = samples[i]!;
      const kind = samples[i + 1]!;
      const cpu = samples[i + 2]!;
      if (kind === BUSY) {
        this.lastBusyRow = samples[i + 3]!;
      } else if (kind === COLLECTION) {
        const labels = this.workSinceLastTick(at, epochOffsetMicros);
        const row = this.rowOf(samples[i + 3]!, labels === undefined ? NO_SPAN : this.spans.id(labels));
        this.rowCount[row]! += samples[i + 4]!;
        this.rowWallCount[row]! += samples[i + 4]!;
        this.rowCpu[row]! += cpu;
        this.lastBusyRow = row;
      } else {
        const row = samples[i + 3]!;
        let to = this.lastBusyRow;
        if (to === NONE && cpu > 0) to = this.rowOfWorkBetween(this.workSinceLastTick(at, epochOffsetMicros));
        if (to !== NONE && cpu > 0) {
          if (row !== NONE) this.rowCpu[row]! -= cpu;
          this.rowCpu[to]! += cpu;
        }
        this.lastBusyRow = NONE;
      }
      this.lastTickMicros = at;
    }
  }

  /** Whose work ran between the last tick folded and the one at `at` (epoch µs), as the thread says; undefined when it cannot. */
  private workSinceLastTick(at: number, epochOffsetMicros: number): SampleLabels | undefined {
    return this.workBetween?.(this.lastTickMicros - epochOffsetMicros, at - epochOffsetMicros);
  }

  /** The row of work that ran whole between two ticks (its labels), under WORK_BETWEEN_SAMPLES; NONE when nobody says whose. */
  private rowOfWorkBetween(labels: SampleLabels | undefined): number {
    if (labels === undefined) return NONE;
    const fn = this.functionOf({ name: WORK_BETWEEN_SAMPLES, scriptName: '', scriptId: 0, lineNumber: 0, columnNumber: 0 });
    return this.rowOf(this.nodeOfFunction(fn, NO_PARENT), this.spans.id(labels));
  }
}

/**
 * One tree's ticks, flat, STRIDE numbers each: the timestamp (epoch µs), the kind, the CPU time,
 * the row (a QUIET tick without CPU time: NONE) or, for a COLLECTION, its node, and for a
 * COLLECTION whether it is one of the node's hits (1) or a context with CPU time only (0). Kinds
 * in the order ticks of one timestamp are taken.
 */
const STRIDE = 5;
/** A tick in JavaScript or in a collection, its row known. */
const BUSY = 0;
/** A collection outside any span's context in a thread that says whose work ran when: its row is decided in time order. */
const COLLECTION = 1;
/** An idle or `(program)` tick. */
const QUIET = 2;

function countHits(node: TimeProfileNode): number {
  let hits = node.hitCount;
  for (const child of node.children as TimeProfileNode[]) hits += countHits(child);
  return hits;
}

/** The nodes of V8's garbage collections as topLevel shows them (not a function an app named so). */
const V8_COLLECTIONS = new WeakSet<TimeProfileNode>();

/** The root's children as shown: V8's pseudo-frames dropped or grouped under the runtime frame. */
function topLevel(raw: TimeProfile): TimeProfileNode[] {
  const out: TimeProfileNode[] = [];
  const runtime: TimeProfileNode[] = [];
  for (const child of raw.topDownRoot.children as TimeProfileNode[]) {
    if (child.name === V8_PROGRAM) continue;
    if (child.name === V8_IDLE && (child.contexts?.length ?? 0) === 0) continue;
    if (child.name === V8_GC) {
      const collections = { ...child, name: GC_FRAME };
      V8_COLLECTIONS.add(collections);
      runtime.push(collections);
    } else out.push(child);
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
