/**
 * All samples of a run in one compact form, built in a single pass over the decoded profiles:
 * function names and files interned once across windows, every distinct stack a node of one
 * shared prefix tree (a "stack trie"), and each sample reduced to (stack node, value, span label).
 * Any flame graph is then a projection of the trie onto a subset of samples, and windows of the
 * same code share all of their frames.
 */
import type { ProfileKind, RunProfile } from './load-run.js';
import { LABEL_SPAN_ID, LABEL_SPAN_NAME } from '../wire.js';

/** Frames as parallel arrays of indices into `strings` (plus the line). */
export interface FrameTable {
  name: number[];
  file: number[];
  /** Function start line, 0 when the profile does not say. */
  line: number[];
}

export interface SampleColumns {
  /** Stack trie node of the sample's leaf frame. */
  stack: number[];
  /** Nanoseconds of the kind (CPU or wall). */
  value: number[];
  /** Index into SampleIndex.labels, or -1 for a sample outside any span. */
  label: number[];
}

export interface SampleIndex {
  strings: string[];
  frames: FrameTable;
  /** Parent of each trie node; node 0 is the root (parent -1), and a parent always precedes its children. */
  stackParent: number[];
  /** Frame of each trie node; -1 for the root. */
  stackFrame: number[];
  /** Distinct `span_id` label values, and the `span_name` first seen with each. */
  labels: { spanId: string[]; spanName: string[] };
  samples: Record<ProfileKind, SampleColumns>;
  /** Distinct window numbers with at least one profile, and the time they cover per kind. */
  windows: number;
  durationNs: Record<ProfileKind, number>;
}

class Interner {
  readonly values: string[] = [];
  private readonly ids = new Map<string, number>();

  id(value: string): number {
    let id = this.ids.get(value);
    if (id === undefined) {
      id = this.values.length;
      this.values.push(value);
      this.ids.set(value, id);
    }
    return id;
  }
}

/** pprof packs a column into the high 32 bits of Line.line for some frames (@datadog/pprof "pack" mode). */
const lineOnly = (line: number | bigint): number => Number(BigInt(line) & 0xffffffffn);

export function indexSamples(profiles: readonly RunProfile[]): SampleIndex {
  const strings = new Interner();
  strings.id('');
  const frames: FrameTable = { name: [], file: [], line: [] };
  const frameIds = new Map<string, number>();
  const stackParent = [-1];
  const stackFrame = [-1];
  const children: (Map<number, number> | undefined)[] = [undefined];
  const labelIds = new Map<string, number>();
  const labels = { spanId: [] as string[], spanName: [] as string[] };
  const samples: Record<ProfileKind, SampleColumns> = {
    cpu: { stack: [], value: [], label: [] },
    wall: { stack: [], value: [], label: [] },
  };
  const windows = new Set<number>();
  const durationNs: Record<ProfileKind, number> = { cpu: 0, wall: 0 };

  const frameId = (name: string, file: string, line: number): number => {
    // Functions are told apart by where they start: one name can be defined twice in a file.
    const key = `${name}\0${file}\0${line}`;
    let id = frameIds.get(key);
    if (id === undefined) {
      id = frames.name.length;
      frames.name.push(strings.id(name));
      frames.file.push(strings.id(file));
      frames.line.push(line);
      frameIds.set(key, id);
    }
    return id;
  };

  const childOf = (node: number, frame: number): number => {
    let kids = children[node];
    if (kids === undefined) children[node] = kids = new Map();
    let child = kids.get(frame);
    if (child === undefined) {
      child = stackParent.length;
      stackParent.push(node);
      stackFrame.push(frame);
      children.push(undefined);
      kids.set(frame, child);
    }
    return child;
  };

  for (const { profile, kind, valueIndex, window } of profiles) {
    windows.add(window);
    durationNs[kind] += Number(profile.durationNanos);
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
        ids.push(frameId(text(fn.name) || '(anonymous)', text(fn.filename), start));
      }
      locationFrames.set(Number(location.id), ids);
    }
    const spanIdKey = table.indexOf(LABEL_SPAN_ID);
    const spanNameKey = table.indexOf(LABEL_SPAN_NAME);
    const out = samples[kind];

    for (const sample of profile.sample) {
      const value = Number(sample.value[valueIndex] ?? 0);
      if (value === 0) continue;
      let node = 0;
      for (let i = sample.locationId.length - 1; i >= 0; i--) {
        for (const frame of locationFrames.get(Number(sample.locationId[i])) ?? []) node = childOf(node, frame);
      }
      let spanId: string | undefined;
      let spanName = '';
      for (const label of sample.label) {
        const key = Number(label.key);
        if (key === spanIdKey && spanIdKey > 0) spanId = text(label.str).toLowerCase();
        else if (key === spanNameKey && spanNameKey > 0) spanName = text(label.str);
      }
      let label = -1;
      if (spanId !== undefined && spanId !== '') {
        label = labelIds.get(spanId) ?? -1;
        if (label < 0) {
          label = labels.spanId.length;
          labels.spanId.push(spanId);
          labels.spanName.push(spanName);
          labelIds.set(spanId, label);
        }
      }
      out.stack.push(node);
      out.value.push(value);
      out.label.push(label);
    }
  }

  return { strings: strings.values, frames, stackParent, stackFrame, labels, samples, windows: windows.size, durationNs };
}
