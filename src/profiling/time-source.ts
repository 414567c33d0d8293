import { createRequire } from 'node:module';
import type { ProfileSource } from './profile-source.js';
import type { WindowPart } from './profile-window.js';
import { type FrameSlot, type GlobalSlot, Sampler } from './sampler.js';
import { type TimeBuild, TimeFold } from './time-profile.js';

const require = createRequire(import.meta.url);
/** Required on its own, not through @datadog/pprof's index (which loads its heap profiler and more). */
const PPROF_ACF = '@datadog/pprof/out/src/async-context-frame.js';

export interface TimeSourceOptions extends TimeBuild {
  flushIntervalMs: number;
}

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
  /** True when AsyncContextFrame carries the sampler's context (Node 24+, or 22 with its flag). */
  readonly frameCarriesContext: boolean;
  /** False where the sampler cannot attach contexts (no SIGPROF on Windows): profiles, no links. */
  readonly linksSamples: boolean;

  constructor(private readonly options: TimeSourceOptions) {
    const acf = require(PPROF_ACF) as { isAsyncContextFrameActive(): boolean };
    this.linksSamples = process.platform !== 'win32';
    this.frameCarriesContext = this.linksSamples && acf.isAsyncContextFrameActive();
    this.sampler = new Sampler({
      intervalMicros: options.intervalMicros,
      durationMillis: options.flushIntervalMs,
      withContexts: this.linksSamples,
      // CPU time per sample needs contexts; the wall-only set-up skips its cost.
      collectCpuTime: options.types.includes('cpu'),
      useFrame: this.frameCarriesContext,
    });
    this.fold = new TimeFold(options);
  }

  start(): void {
    this.sampler.start();
  }

  /** Takes the sampler's tree so far into the window being recorded; sampling goes on. */
  gather(): void {
    const raw = this.sampler.stop(true);
    if (raw !== undefined) this.fold.add(raw, epochOffsetMicros());
  }

  cut(last: boolean): WindowPart | undefined {
    const raw = this.sampler.stop(!last);
    const fold = this.fold;
    this.fold = new TimeFold(this.options);
    if (raw !== undefined) fold.add(raw, epochOffsetMicros());
    return fold.size === 0 ? undefined : fold.part();
  }

  /** The sampler's context slot in the async frame (AsyncContextFrame only). */
  get frameSlot(): FrameSlot | undefined {
    const key = this.sampler.frameKey;
    return key === undefined ? undefined : { key, holder: (value) => this.sampler.holder(value) };
  }

  /** The sampler's one global context slot (no AsyncContextFrame). */
  readonly globalSlot: GlobalSlot = { set: (value) => this.sampler.set(value) };

  /** What the last stop (a gather or a cut) found of V8's profiler getting stuck: 0 nothing, 1 maybe, 2 certainly (Sampler.stuckAtLastStop). */
  get stuckAtLastStop(): number {
    return this.sampler.stuckAtLastStop;
  }
}

/**
 * The epoch's lead over the monotonic clock now, in microseconds. The sampler turns its
 * monotonic ticks into epoch timestamps by the system clock read as it stops; read again right
 * after, this takes them back, so a step of the system clock between a span's end and the stop
 * (NTP, a resumed VM) leaves a sample where it was. Date.now()'s millisecond step makes samples
 * read up to 1 ms late (labels.ts, CLOCK_SKEW_MICROS).
 */
function epochOffsetMicros(): number {
  return (Date.now() - performance.now()) * 1000;
}
