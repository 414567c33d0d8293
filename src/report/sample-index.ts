/**
 * All samples of a run in one compact form, built one decoded profile at a time: function names
 * and files interned once across windows, every distinct stack a node of one shared prefix tree
 * (a "stack trie"), and each sample reduced to (stack node, value, span label, thread). Any flame
 * graph is then a projection of the trie onto a subset of samples. Decoded pprof objects are many
 * and short-lived; folding each into this index as soon as it is read keeps them from piling up on
 * the heap over a long recording.
 */
import type { Profile } from 'pprof-format';
import { PROFILE_TYPE_NAMES, type ProfileType } from '../profiling/profile-types.js';
import { agentFrameName, displayName, frameOwner, isAppFrame, ownerName } from './frame-owner.js';
import { LABEL_SPAN_ID, LABEL_SPAN_NAME, LABEL_THREAD_NAME, MAIN_THREAD_NAME } from '../wire.js';
import { Interner } from '../util/interner.js';

/** A profile type as the report reads it (profiling/profile-types.ts). */
export type ProfileKind = ProfileType;

/** `make(kind)` for each of `kinds`, as a record. */
export function recordOf<K extends ProfileKind, T>(kinds: readonly K[], make: (kind: K) => T): Record<K, T> {
  return Object.fromEntries(kinds.map((kind) => [kind, make(kind)])) as Record<K, T>;
}

/** `make(kind)` for every profile type of the table. */
export function everyKind<T>(make: (kind: ProfileKind) => T): Record<ProfileKind, T> {
  return recordOf(PROFILE_TYPE_NAMES, make);
}

/** Frames as parallel arrays of indices into `strings` (plus the line). */
export interface FrameTable {
  /** As a report names it (frame-owner.ts displayName). */
  name: number[];
  file: number[];
  /** Function start line, 0 when the profile does not say. */
  line: number[];
  /** Whose code it is, as the "by package" view names it (frame-owner.ts ownerName). */
  owner: number[];
  /** Whether it is a line of the app's own code. */
  app: boolean[];
}

export interface SampleColumns {
  /** Stack trie node of the sample's leaf frame. */
  stack: number[];
  /** The kind's shown value: nanoseconds of CPU or wall time, bytes in use. */
  value: number[];
  /** Index into SampleIndex.labels, or -1 for a sample outside any span. */
  label: number[];
  /** Index into SampleIndex.threads. */
  thread: number[];
}

export interface SampleIndex {
  strings: string[];
  frames: FrameTable;
  /** Parent of each trie node; node 0 is the root (parent -1), and a parent always precedes its children. */
  stackParent: number[];
  /** Frame of each trie node; -1 for the root. */
  stackFrame: number[];
  /**
   * Distinct `span_id` label values (lowercase); sample labels index into it. `spanName`, parallel:
   * the `span_name` label (the local root's name) samples of that span carry, '' when none.
   */
  labels: { spanId: string[]; spanName: string[] };
  /**
   * Distinct `thread_name` label values: the main thread first (always there, index 0), then the
   * workers by name, `worker 2` before `worker 10`. A sample without the label (a recording made
   * before workers were profiled, a heap profile) ran on the main thread.
   */
  threads: string[];
  samples: Record<ProfileKind, SampleColumns>;
  /** Distinct window numbers with at least one profile, and the time they cover per kind. */
  windows: number;
  durationNs: Record<ProfileKind, number>;
}

/** Compares thread names as a user reads them: `worker 2` before `worker 10`. */
const byName = new Intl.Collator('en', { numeric: true });

/** pprof packs a column into the high 32 bits of Line.line for some frames (@datadog/pprof "pack" mode). */
const lineOnly = (line: number | bigint): number => Number(BigInt(line) & 0xffffffffn);

export class SampleIndexBuilder {
  private readonly strings = new Interner<string>();
  private readonly frames: FrameTable = { name: [], file: [], line: [], owner: [], app: [] };
  /** Per frame: the agent's module when it is the agent's code (folded out of stacks), else undefined. */
  private readonly agentModule: (string | undefined)[] = [];
  /** Per frame: Node's own code (folded out too where it only runs between two of the agent's frames). */
  private readonly nodeFrame: boolean[] = [];
  private readonly frameIds = new Map<string, number>();
  private readonly stackParent = [-1];
  private readonly stackFrame = [-1];
  private readonly children: (Map<number, number> | undefined)[] = [undefined];
  private readonly labelIds = new Map<string, number>();
  private readonly labels = { spanId: [] as string[], spanName: [] as string[] };
  private readonly threadIds = new Map<string, number>([[MAIN_THREAD_NAME, 0]]);
  private readonly samples: Record<ProfileKind, SampleColumns> = everyKind(() => ({ stack: [], value: [], label: [], thread: [] }));
  private readonly windows = new Set<number>();
  private readonly durationNs: Record<ProfileKind, number> = everyKind(() => 0);

  /** `agentDir`: the agent's dist folder, as the recording names it, so its frames are known. */
  constructor(private readonly agentDir?: string) {
    this.strings.id('');
  }

  /** Folds in one profile window; `valueIndex` is where its kind's value sits in each sample. */
  add(profile: Profile, kind: ProfileKind, valueIndex: number, window: number): void {
    this.windows.add(window);
    this.durationNs[kind] += Number(profile.durationNanos);
    const table = profile.stringTable.strings;
    const text = (index: number | bigint) => table[Number(index)] ?? '';
    const functions = new Map(profile.function.map((fn) => [Number(fn.id), fn]));
    // Frames of each location root-most first (line[0] is the innermost inlined frame).
    const locationFrames = new Map<number, number[]>();
    for (const location of profile.location) {
      const ids: number[] = [];
      for (let i = location.line.length - 1; i >= 0; i--) {
        const line = location.line[i];
        const fn = line === undefined ? undefined : functions.get(Number(line.functionId));
        if (line === undefined || fn === undefined) continue;
        const start = Number(fn.startLine) || lineOnly(line.line);
        ids.push(this.frameId(text(fn.name) || '(anonymous)', text(fn.filename), start));
      }
      locationFrames.set(Number(location.id), ids);
    }
    const spanIdKey = table.indexOf(LABEL_SPAN_ID);
    const spanNameKey = table.indexOf(LABEL_SPAN_NAME);
    const threadKey = table.indexOf(LABEL_THREAD_NAME);
    // span_id string-table index → label; each distinct span recurs in many samples.
    const labelOfString = new Map<number, number>();
    // thread_name string-table index → thread, likewise.
    const threadOfString = new Map<number, number>();
    const out = this.samples[kind];

    for (const sample of profile.sample) {
      const value = Number(sample.value[valueIndex] ?? 0);
      if (value === 0) continue;
      const path: number[] = [];
      for (let i = sample.locationId.length - 1; i >= 0; i--) for (const frame of locationFrames.get(Number(sample.locationId[i])) ?? []) path.push(frame);
      const node = this.stackOf(path);
      let spanIdString = 0;
      let spanNameString = 0;
      let threadString = 0;
      for (const label of sample.label) {
        const key = Number(label.key);
        if (key === spanIdKey) spanIdString = Number(label.str);
        else if (key === spanNameKey) spanNameString = Number(label.str);
        else if (key === threadKey) threadString = Number(label.str);
      }
      let label = -1;
      if (spanIdKey > 0 && spanIdString > 0) {
        label = labelOfString.get(spanIdString) ?? this.labelId(text(spanIdString));
        labelOfString.set(spanIdString, label);
        if (spanNameString > 0 && this.labels.spanName[label] === '') this.labels.spanName[label] = text(spanNameString);
      }
      let thread = 0;
      if (threadKey > 0 && threadString > 0) {
        thread = threadOfString.get(threadString) ?? this.threadId(text(threadString));
        threadOfString.set(threadString, thread);
      }
      out.stack.push(node);
      out.value.push(value);
      out.label.push(label);
      out.thread.push(thread);
    }
  }

  /**
   * The trie node of a stack recorded outside the profiles (an event-loop block's, blocks.json),
   * its frames root first as the profiles name them: folded as a profile's stacks are, so its
   * frames are the profiles' own.
   */
  stackNodeOf(frames: readonly { name: string; file: string; line: number }[]): number {
    return this.stackOf(frames.map((frame) => this.frameId(frame.name || '(anonymous)', frame.file, frame.line)));
  }

  build(): SampleIndex {
    const { threads, samples } = this.threadsInOrder();
    return {
      strings: this.strings.values,
      frames: this.frames,
      stackParent: this.stackParent,
      stackFrame: this.stackFrame,
      labels: this.labels,
      threads,
      samples,
      windows: this.windows.size,
      durationNs: { ...this.durationNs },
    };
  }

  private frameId(name: string, file: string, line: number): number {
    // Functions are told apart by where they start: one name can be defined twice in a file.
    const key = `${name}\0${file}\0${line}`;
    let id = this.frameIds.get(key);
    if (id === undefined) {
      const owner = frameOwner(name, file, this.agentDir);
      id = this.frames.name.length;
      this.frames.name.push(this.strings.id(displayName(name, file, line)));
      this.frames.file.push(this.strings.id(file));
      this.frames.line.push(line);
      this.frames.owner.push(this.strings.id(ownerName(owner)));
      this.frames.app.push(isAppFrame(owner));
      this.agentModule.push(owner.kind === 'agent' ? owner.module : undefined);
      this.nodeFrame.push(owner.kind === 'node');
      this.frameIds.set(key, id);
    }
    return id;
  }

  /**
   * The trie node of a stack (frames root-most first), with the agent's frames folded out: its
   * wrappers (the instrumentations', the guard's, the context's) sit between the app's frames and
   * a library's, and Node's own frames between two of them (AsyncLocalStorage.run) go with them.
   * A stack whose leaf is the agent's keeps one frame for it, named by its module: that time is
   * the agent's, and says so.
   */
  private stackOf(path: readonly number[]): number {
    const agent = (k: number) => this.agentModule[path[k] as number] !== undefined;
    let node = 0;
    for (let k = 0; k < path.length; k++) {
      const frame = path[k] as number;
      const module = this.agentModule[frame];
      if (module !== undefined) {
        if (k === path.length - 1) node = this.childOf(node, this.frameId(agentFrameName(module), '', 0));
        continue;
      }
      if (this.nodeFrame[frame] && k > 0 && k < path.length - 1 && agent(k - 1) && agent(k + 1)) continue;
      node = this.childOf(node, frame);
    }
    return node;
  }

  private childOf(node: number, frame: number): number {
    let kids = this.children[node];
    if (kids === undefined) this.children[node] = kids = new Map();
    let child = kids.get(frame);
    if (child === undefined) {
      child = this.stackParent.length;
      this.stackParent.push(node);
      this.stackFrame.push(frame);
      this.children.push(undefined);
      kids.set(frame, child);
    }
    return child;
  }

  private threadId(name: string): number {
    let id = this.threadIds.get(name);
    if (id === undefined) this.threadIds.set(name, (id = this.threadIds.size));
    return id;
  }

  /**
   * Threads in the order the report lists them (main first, then by name, numbers compared as
   * numbers), with the samples' thread column renumbered to match. Workers are met in whatever
   * order their first samples were written; their names are what a user looks them up by.
   */
  private threadsInOrder(): { threads: string[]; samples: Record<ProfileKind, SampleColumns> } {
    const met = [...this.threadIds.keys()];
    const threads = [MAIN_THREAD_NAME, ...met.slice(1).sort(byName.compare)];
    if (threads.every((name, i) => met[i] === name)) return { threads, samples: this.samples };
    const renumber = met.map((name) => threads.indexOf(name));
    return { threads, samples: everyKind((kind) => ({ ...this.samples[kind], thread: this.samples[kind].thread.map((t) => renumber[t] as number) })) };
  }

  private labelId(spanId: string): number {
    const normalized = spanId.toLowerCase();
    let id = this.labelIds.get(normalized);
    if (id === undefined) {
      id = this.labels.spanId.length;
      this.labels.spanId.push(normalized);
      this.labels.spanName.push('');
      this.labelIds.set(normalized, id);
    }
    return id;
  }
}
