/**
 * One frame table for two runs' flame graphs: a function of either run gets one frame, matched
 * across the runs as the function list matches it (function-deltas.ts, functionKey: owner, name
 * and file name; not the path, which differs between two checkouts, nor the line, which moves
 * when code is added above). A function both runs have is named as the after run names it: where
 * it is now.
 */
import type { FrameTable, RunModel } from '../report/aggregate.js';
import { Interner } from '../util/interner.js';
import { type FunctionRef, functionKey, functionRef } from './function-deltas.js';

export type DiffSide = 'before' | 'after';

export class DiffFrames {
  private readonly strings = new Interner<string>();
  private readonly frames: FrameTable = { name: [], file: [], line: [], owner: [], app: [] };
  private readonly byKey = new Map<string, number>();
  /** Per run: its frame's merged frame, -1 until met. */
  private readonly ofRun = new Map<RunModel, Int32Array>();
  /** Per merged frame: whether the after run named it (its naming then stands). */
  private readonly namedByAfter: boolean[] = [];

  constructor() {
    this.strings.id('');
  }

  /** The merged frame of frame `frame` of `model`, the `side` run's; -1 (the root) stays -1. */
  frameOf(model: RunModel, side: DiffSide, frame: number): number {
    if (frame < 0) return -1;
    let memo = this.ofRun.get(model);
    if (memo === undefined) this.ofRun.set(model, (memo = new Int32Array(model.index.frames.name.length).fill(-1)));
    const known = memo[frame] as number;
    if (known >= 0) return known;
    const ref = functionRef(model, frame);
    const key = functionKey(ref);
    let id = this.byKey.get(key);
    if (id === undefined) {
      id = this.frames.name.length;
      this.byKey.set(key, id);
      this.namedByAfter.push(false);
      this.name(id, ref);
    }
    if (side === 'after' && !this.namedByAfter[id]) {
      this.namedByAfter[id] = true;
      this.name(id, ref);
    }
    memo[frame] = id;
    return id;
  }

  table(): { strings: string[]; frames: FrameTable } {
    return { strings: this.strings.values, frames: this.frames };
  }

  private name(id: number, ref: FunctionRef): void {
    this.frames.name[id] = this.strings.id(ref.name);
    this.frames.file[id] = this.strings.id(ref.file);
    this.frames.line[id] = ref.line;
    this.frames.owner[id] = this.strings.id(ref.owner);
    this.frames.app[id] = ref.app;
  }
}
