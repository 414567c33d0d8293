import { createRequire } from 'node:module';
import type { SourceMapper } from '@datadog/pprof/out/src/sourcemapper/sourcemapper.js';
import type { TimeProfile, TimeProfileNodeContext } from '@datadog/pprof/out/src/v8-types.js';
import type { ProfileType } from '../config.js';
import { Sampler } from './sampler.js';
import type { FrameSlot } from '../span-link/frame-context.js';
import type { GlobalSlot } from '../span-link/slot-context.js';
import { mayHaveSourceMaps } from './source-map-scan.js';
import { SpanLabels } from '../span-link/labels.js';
import type { WindowBuild } from './window-profile.js';

const require = createRequire(import.meta.url);
/** Required one by one, not through @datadog/pprof's index (which loads its heap profiler and more). */
const PPROF_ACF = '@datadog/pprof/out/src/async-context-frame.js';
const PPROF_SOURCE_MAPPER = '@datadog/pprof/out/src/sourcemapper/sourcemapper.js';
/**
 * How far a sample's timestamp (V8's tick, converted to the epoch at each cut) may fall after the
 * end the SDK recorded for its span, though taken before it: the SDKs time spans with Date.now()
 * (millisecond steps) or performance.timeOrigin (off by milliseconds per process). Measured here
 * up to ~5 ms (an app on OpenTelemetry JS 2.x, test/own-otel-v2.test.ts); a sample later than this
 * past its span's end is not the span's (SpanLabels.covers).
 */
const CLOCK_SKEW_MICROS = 10_000;

export interface ProfileWindow {
  /** Epoch milliseconds. */
  from: number;
  until: number;
  /** The sampler's tree as it came out; turned into pprof when encoded (window-profile.ts). */
  raw: TimeProfile;
  build: WindowBuild;
  /** How long the cut held the event loop (the sampler's stop and restart), milliseconds. */
  cutMs: number;
}

export interface ProfilerOptions {
  types: readonly ProfileType[];
  samplingIntervalMicros: number;
  flushIntervalMs: number;
  traceIdLabel: boolean;
}

/**
 * The sampler, cut into windows. Sampling never stops between windows (`stop(restart = true)`);
 * a window leaves as the sampler's raw tree, and becomes a CPU and a wall pprof later, off the cut
 * (window-profile.ts), with each sample's span read from its context then.
 */
export class Profiler {
  private readonly sampler: Sampler;
  private windowStart = 0;
  /** Source maps of the app, once read: windows built from then on name the original sources. */
  private sourceMapper: SourceMapper | undefined;
  /** True when AsyncContextFrame carries the sampler's context (reference §3). */
  readonly frameCarriesContext: boolean;
  /** False where the sampler cannot attach contexts (no SIGPROF on Windows): profiles, no links. */
  readonly linksSamples: boolean;

  constructor(private readonly options: ProfilerOptions) {
    const acf = require(PPROF_ACF) as { isAsyncContextFrameActive(): boolean };
    this.linksSamples = process.platform !== 'win32';
    this.frameCarriesContext = this.linksSamples && acf.isAsyncContextFrameActive();
    this.sampler = new Sampler({
      intervalMicros: options.samplingIntervalMicros,
      durationMillis: options.flushIntervalMs,
      withContexts: this.linksSamples,
      // CPU time per sample needs contexts; the wall-only set-up skips its cost.
      collectCpuTime: options.types.includes('cpu'),
      useFrame: this.frameCarriesContext,
    });
  }

  start(): void {
    this.sampler.start();
    this.windowStart = Date.now();
  }

  /** The sampler's context slot in the async frame, for the linking context manager (AsyncContextFrame only). */
  get frameSlot(): FrameSlot | undefined {
    const key = this.sampler.frameKey;
    return key === undefined ? undefined : { key, holder: (labels) => this.sampler.holder(labels) };
  }

  /** The sampler's one global context slot, for the linking context manager (no AsyncContextFrame). */
  readonly globalSlot: GlobalSlot = { set: (labels) => this.sampler.set(labels) };

  /**
   * Maps compiled JavaScript frames back to their sources (TypeScript file and line) from the
   * app's source maps. Mapping happens when a window is built, off the sampler, so the maps
   * apply to every window cut once they are read — normally before the first, as the scan ends
   * while the app is still starting. The mapper is loaded only for a folder that may hold maps.
   */
  async loadSourceMaps(dir: string): Promise<number> {
    if (!(await mayHaveSourceMaps(dir))) return 0;
    const { SourceMapper } = require(PPROF_SOURCE_MAPPER) as typeof import('@datadog/pprof/out/src/sourcemapper/sourcemapper.js');
    const mapper = await SourceMapper.create([dir]);
    if (mapper.infoMap.size > 0) this.sourceMapper = mapper;
    return mapper.infoMap.size;
  }

  /** Ends the current window; with `last`, sampling stops for good. */
  cut(last = false): ProfileWindow | undefined {
    const started = performance.now();
    const raw = this.sampler.stop(!last);
    if (raw === undefined) return undefined;
    const cutMs = performance.now() - started;
    const from = this.windowStart;
    const until = Date.now();
    this.windowStart = until;
    const { types, samplingIntervalMicros, traceIdLabel } = this.options;
    return { from, until, raw, cutMs, build: { intervalMicros: samplingIntervalMicros, types, traceIdLabel, spanOf: this.spanOf, sourceMapper: this.sourceMapper } };
  }

  /**
   * What the last cut found of V8's profiler getting stuck (the bug whose workaround we leave
   * off): 0 nothing, 1 maybe (can be a false positive), 2 certainly. In both latter cases the
   * sampler has already been restarted; the window may be incomplete.
   */
  get lastCutStuckSampler(): number {
    return this.sampler.stuckAtLastStop;
  }

  private readonly spanOf = ({ context, timestamp }: TimeProfileNodeContext): SpanLabels | undefined => {
    if (!(context instanceof SpanLabels)) return undefined;
    // Sample timestamps are epoch microseconds; a span's end is the SDK's own clock reading.
    return context.covers(Number(timestamp), Math.max(this.options.samplingIntervalMicros, CLOCK_SKEW_MICROS)) ? context : undefined;
  };
}
