import { createRequire } from 'node:module';
import type { SourceMapper } from '@datadog/pprof/out/src/sourcemapper/sourcemapper.js';
import { AllocationSource } from './allocation-source.js';
import { HeapSource, type HeapSourceOptions } from './heap-source.js';
import type { ProfileSource } from './profile-source.js';
import { profileTypeInfo, type ProfileType, type SourceName } from './profile-types.js';
import type { ProfileWindow, WindowPart } from './profile-window.js';
import { mayHaveSourceMaps } from './source-map-scan.js';
import type { TimeBuild } from './time-profile.js';
import { TimeSource } from './time-source.js';

export type { ProfileWindow };

const require = createRequire(import.meta.url);
const PPROF_SOURCE_MAPPER = '@datadog/pprof/out/src/sourcemapper/sourcemapper.js';

export interface ProfilerOptions {
  types: readonly ProfileType[];
  samplingIntervalMicros: number;
  flushIntervalMs: number;
  traceIdLabel: boolean;
  /** Who a time sample belongs to (the span-link side answers); without it samples go unlabelled. */
  spanOf?: TimeBuild['spanOf'];
  /** Bounds the labels of each window's spans (the span-link side's cap). */
  boundLabels?: TimeBuild['boundLabels'];
  heap: HeapSourceOptions;
  /**
   * Called synchronously when the heap limit is hit (heap profile on), with a window holding the
   * heap profile of that moment: the last thing the process may do before it dies of it.
   */
  outOfMemory?: (window: ProfileWindow) => void;
}

type AtLimit = ((part: WindowPart) => void) | undefined;

/** The samplers behind the profile types other than the time sampler's (profile-types.ts `source`). */
const SOURCES: Record<Exclude<SourceName, 'time'>, (options: ProfilerOptions, atLimit: AtLimit) => ProfileSource> = {
  heap: (options, atLimit) => new HeapSource({ ...options.heap, outOfMemory: atLimit }),
  allocation: (options) => new AllocationSource(options.heap),
};

const NO_ONE: TimeBuild['spanOf'] = () => undefined;
/**
 * How far a window's length by the system clock may differ from its length by the monotonic clock
 * before the system clock counts as stepped: NTP's slewing moves it by 0.5 ms a second at most,
 * Date.now() by its millisecond; a step below this leaves the windows tiled, and below the shortest
 * flush interval (1 s) a window never runs backwards.
 */
const CLOCK_STEP_MS = 100;

/**
 * Every sampler the config asks for, cut into windows together: each cut takes one part from each
 * source, built into pprof later, off the cut. The time sampler is the one that carries span links
 * (its context slots are handed to the span-link side).
 */
export class Profiler {
  readonly time: TimeSource | undefined;
  private readonly sources: ProfileSource[] = [];
  /** When the current window started: epoch ms (the last window's end), and on the monotonic clock (performance.now(), ms). */
  private windowStart = 0;
  private windowStartedAt = 0;
  /** The longest a gather held the event loop since the last cut, milliseconds, and how many there were. */
  private longestGatherMs = 0;
  private gathers = 0;
  /** Source maps of the app, once read: windows built from then on name the original sources. */
  private sourceMapper: SourceMapper | undefined;

  constructor(options: ProfilerOptions) {
    const ofSource = (source: string) => options.types.filter((type) => profileTypeInfo(type).source === source);
    const timeTypes = ofSource('time');
    if (timeTypes.length > 0) {
      this.time = new TimeSource({
        types: timeTypes,
        intervalMicros: options.samplingIntervalMicros,
        flushIntervalMs: options.flushIntervalMs,
        traceIdLabel: options.traceIdLabel,
        spanOf: options.spanOf ?? NO_ONE,
        boundLabels: options.boundLabels,
      });
      this.sources.push(this.time);
    }
    const { outOfMemory } = options;
    const atLimit: AtLimit =
      outOfMemory && ((part) => outOfMemory({ ...this.windowSoFar(), parts: [part], sourceMapper: this.sourceMapper, longestStopMs: 0, stops: 0 }));
    for (const [name, make] of Object.entries(SOURCES)) if (ofSource(name).length > 0) this.sources.push(make(options, atLimit));
  }

  start(): void {
    for (const source of this.sources) source.start();
    this.windowStart = Date.now();
    this.windowStartedAt = performance.now();
  }

  /**
   * The current window's time so far, epoch ms. It ends at the system clock's now and starts where
   * the last one ended, so that windows tile time — unless the system clock stepped meanwhile (NTP,
   * a resumed VM), which read at both ends would make it run backwards or span minutes: then it
   * lasts as long as the monotonic clock says, and leaves a gap or an overlap, as the clock did.
   */
  private windowSoFar(now = performance.now()): { from: number; until: number } {
    const until = Date.now();
    const lasted = now - this.windowStartedAt;
    const stepped = Math.abs(until - this.windowStart - lasted) > CLOCK_STEP_MS;
    return { from: stepped ? until - Math.round(lasted) : this.windowStart, until };
  }

  /** The in-use heap sampler, when the heap profile is on. */
  get heap(): HeapSource | undefined {
    return this.sources.find((source): source is HeapSource => source instanceof HeapSource);
  }

  /** Whether a heap sampler watches the heap limit (to hand over the profile of that moment). */
  get watchesOutOfMemory(): boolean {
    return this.sources.some((source) => source instanceof HeapSource && source.watchesOutOfMemory);
  }

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

  /** The app's source maps, once read (loadSourceMaps); undefined before, or when it has none. */
  get sourceMaps(): SourceMapper | undefined {
    return this.sourceMapper;
  }

  /**
   * Takes the time sampler's tree so far into the current window (gather-pace.ts says when), and
   * returns how long that held the event loop, in milliseconds; undefined without a time sampler.
   */
  gather(): number | undefined {
    if (this.time === undefined) return undefined;
    const started = performance.now();
    this.time.gather();
    const heldMs = performance.now() - started;
    this.longestGatherMs = Math.max(this.longestGatherMs, heldMs);
    this.gathers += 1;
    return heldMs;
  }

  /** Ends the current window; with `last`, sampling stops for good. */
  cut(last = false): ProfileWindow | undefined {
    const started = performance.now();
    const parts: WindowPart[] = [];
    for (const source of this.sources) {
      const part = source.cut(last);
      if (part) parts.push(part);
    }
    const longestStopMs = Math.max(performance.now() - started, this.longestGatherMs);
    const stops = this.gathers + 1;
    this.longestGatherMs = 0;
    this.gathers = 0;
    if (parts.length === 0) return undefined;
    const now = performance.now();
    const { from, until } = this.windowSoFar(now);
    this.windowStart = until;
    this.windowStartedAt = now;
    return { from, until, parts, longestStopMs, stops, sourceMapper: this.sourceMapper };
  }
}
