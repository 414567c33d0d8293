import { createRequire } from 'node:module';
import type { TimeProfile } from '@datadog/pprof/out/src/v8-types.js';
import type { ProfileSource } from './profile-source.js';
import type { WindowPart } from './profile-window.js';
import { epochOffsetMicros } from './epoch-offset.js';
import { type FrameSlot, type GlobalSlot, Sampler } from './sampler.js';
import type { FoldShipment, ShippedLabels } from './fold-shipment.js';
import type { OtherThread, SampleLabels } from './profile-window.js';
import { type ThreadFold, type TimeBuild, TimeFold, threadsPart } from './time-profile.js';
import { MAIN_THREAD_NAME } from '../wire.js';

const require = createRequire(import.meta.url);
/** Required on its own, not through @datadog/pprof's index (which loads its heap profiler and more). */
const PPROF_ACF = '@datadog/pprof/out/src/async-context-frame.js';

export interface TimeSourceOptions extends TimeBuild {
  flushIntervalMs: number;
}

/**
 * Sees the sampler's stops: just before each one, and the tree each one took, with the epoch's
 * lead over the monotonic clock read then (src/blocks/block-watch.ts reads a stall's samples there).
 */
export interface TreeTap {
  beforeStop(): void;
  tree(raw: TimeProfile | undefined, epochOffsetMicros: number): void;
}

/** Shipped folds hold no raw trees: their samples' owners came with them. */
const SHIPPED: TimeBuild['spanOf'] = () => undefined;

/**
 * The CPU and wall profiles: @datadog/pprof's time sampler, which records with every sample the
 * context the span-link side keeps in its slot. Sampling never stops between windows
 * (`stop(restart = true)`); the sampler's tree is taken several times a window (`gather`, paced by
 * gather-pace.ts) so that no single stop holds a large tree, and folded at once (TimeFold); a
 * window's part is its fold, made pprof off the cut.
 */
export class TimeSource implements ProfileSource {
  private readonly sampler: Sampler;
  /** The trees gathered since the last cut. */
  private fold: TimeFold;
  /** What other threads shipped since the last cut, one fold per thread, in the order they first shipped. */
  private others = new Map<number, ThreadFold>();
  /** True when AsyncContextFrame carries the sampler's context (Node 24+, or 22 with its flag). */
  readonly frameCarriesContext: boolean;
  /** False where the sampler cannot attach contexts (no SIGPROF on Windows): profiles, no links. */
  readonly linksSamples: boolean;
  /** Sees every stop and its tree; none by default. */
  tap: TreeTap | undefined;

  constructor(private readonly options: TimeSourceOptions) {
    const acf = require(PPROF_ACF) as { isAsyncContextFrameActive(): boolean };
    this.linksSamples = process.platform !== 'win32';
    this.frameCarriesContext = this.linksSamples && acf.isAsyncContextFrameActive();
    this.sampler = new Sampler({
      intervalMicros: options.intervalMicros,
      windowMillis: options.flushIntervalMs,
      withContexts: this.linksSamples,
      // CPU time per sample needs contexts; the wall-only set-up skips its cost.
      collectCpuTime: options.types.includes('cpu'),
      useFrame: this.frameCarriesContext,
    });
    this.fold = new TimeFold(options.spanOf, options.workBetween);
  }

  start(): void {
    this.sampler.start();
  }

  /** Takes the sampler's tree so far into the window being recorded; sampling goes on. */
  gather(): void {
    this.tap?.beforeStop();
    const raw = this.sampler.stop(true);
    const offset = epochOffsetMicros();
    if (raw !== undefined) this.fold.add(raw, offset);
    this.tap?.tree(raw, offset);
  }

  cut(last: boolean): WindowPart | undefined {
    const fold = this.takeFold(last);
    const threads = [{ name: MAIN_THREAD_NAME, fold }, ...this.others.values()];
    this.others = new Map();
    return threads.every((thread) => thread.fold.size === 0) ? undefined : threadsPart(threads, this.options);
  }

  /**
   * What was recorded since the last cut or shipment, as a worker thread hands it to the main
   * thread (undefined when nothing was); with `last`, sampling stops for good.
   */
  ship(last: boolean): FoldShipment | undefined {
    const fold = this.takeFold(last);
    return fold.size === 0 ? undefined : fold.toShipment();
  }

  /** Adds another thread's samples to the window being recorded, its spans as `spanOfLabels` names them here. */
  addShipment(thread: OtherThread, shipment: FoldShipment, spanOfLabels: (labels: ShippedLabels) => SampleLabels | undefined): void {
    let other = this.others.get(thread.key);
    if (other === undefined) this.others.set(thread.key, (other = { name: thread.name, fold: new TimeFold(SHIPPED) }));
    other.fold.addShipment(shipment, spanOfLabels);
  }

  private takeFold(last: boolean): TimeFold {
    this.tap?.beforeStop();
    const raw = this.sampler.stop(!last);
    const offset = epochOffsetMicros();
    const fold = this.fold;
    this.fold = new TimeFold(this.options.spanOf, this.options.workBetween);
    if (raw !== undefined) fold.add(raw, offset);
    this.tap?.tree(raw, offset);
    return fold;
  }

  /** The sampler's context slot in the async frame (AsyncContextFrame only). */
  get frameSlot(): FrameSlot | undefined {
    const key = this.sampler.frameKey;
    return key === undefined ? undefined : { key, holder: (value) => this.sampler.holder(value), samplesTaken: () => this.sampler.samplesTaken() };
  }

  /** The sampler's one global context slot (no AsyncContextFrame). */
  readonly globalSlot: GlobalSlot = { set: (value) => this.sampler.set(value), samplesTaken: () => this.sampler.samplesTaken() };

  /** What the last stop (a gather or a cut) found of V8's profiler getting stuck: 0 nothing, 1 maybe, 2 certainly (Sampler.stuckAtLastStop). */
  get stuckAtLastStop(): number {
    return this.sampler.stuckAtLastStop;
  }

  /** Why samples before the last stop were dropped (Sampler.droppedAtLastStop), as a warning names it; undefined when none was. */
  droppedAtLastStop(thread: string): string | undefined {
    if (!this.sampler.droppedAtLastStop) return undefined;
    const seconds = Math.round(this.sampler.keepsMillis / 1000);
    return `thread "${thread}" ran more than ${seconds} s without turning its event loop: the profiler keeps ${seconds} s of samples between two turns (at ${this.options.intervalMicros} µs apart), the rest of that stall was dropped from the profiles`;
  }
}
