import { createRequire } from 'node:module';
import type { ProfileType } from './config.js';
import type { Profile } from './pprof-split.js';
import type { LabelSink } from './span-link/context.js';
import { mayHaveSourceMaps } from './source-map-scan.js';
import { SpanLabels } from './span-link/labels.js';
import { LABEL_SPAN_NAME } from './wire.js';

const require = createRequire(import.meta.url);
/**
 * @datadog/pprof's parts, required one by one: its index also loads the heap profiler, the OTel
 * thread-context writer and the source mapper with the `source-map` package (~5 MB of RSS and
 * ~100 ms before the app's first line), none of which a window needs. The package has no
 * `exports` map, so these paths are public to Node; the version is pinned, and every profiling
 * test goes through them.
 */
const PPROF_TIME = '@datadog/pprof/out/src/time-profiler.js';
const PPROF_ACF = '@datadog/pprof/out/src/async-context-frame.js';
const PPROF_SOURCE_MAPPER = '@datadog/pprof/out/src/sourcemapper/sourcemapper.js';
type TimeProfiler = typeof import('@datadog/pprof/out/src/time-profiler.js');
type SourceMapper = import('@datadog/pprof/out/src/sourcemapper/sourcemapper.js').SourceMapper;

export interface ProfileWindow {
  /** Epoch milliseconds. */
  from: number;
  until: number;
  /** The sampler's profile as it came out, labels resolved; split into `types` when encoded (pprof-split.ts). */
  profile: Profile;
  types: readonly ProfileType[];
}

export interface ProfilerOptions {
  types: readonly ProfileType[];
  samplingIntervalMicros: number;
  flushIntervalMs: number;
  traceIdLabel: boolean;
}

/**
 * The @datadog/pprof time profiler, cut into windows. Sampling never stops between windows
 * (`stop(restart = true)`), each window becomes a CPU and a wall pprof, and a sample's labels are
 * computed from its context when the window is serialized.
 */
export class Profiler {
  private readonly time: TimeProfiler;
  private windowStart = 0;
  private running = false;
  /** A source mapper that became ready since the last window: it takes effect at the next cut. */
  private pendingMapper: SourceMapper | undefined;
  /** Last value written to the sampler's global slot (no-ACF regime), to put back after a restart. */
  private lastContext: object | undefined;
  /** Called when a cut is wanted now (a source mapper is ready): the agent cuts and exports a window. */
  onCutWanted: (() => void) | undefined;
  /** True when AsyncContextFrame carries the sampler's context (reference §3). */
  readonly frameCarriesContext: boolean;
  /** False where the sampler cannot attach contexts (no SIGPROF on Windows): profiles, no links. */
  readonly linksSamples: boolean;

  constructor(private readonly options: ProfilerOptions) {
    this.time = require(PPROF_TIME) as TimeProfiler;
    const acf = require(PPROF_ACF) as { isAsyncContextFrameActive(): boolean };
    this.linksSamples = process.platform !== 'win32';
    this.frameCarriesContext = this.linksSamples && acf.isAsyncContextFrameActive();
  }

  start(sourceMapper?: SourceMapper): void {
    this.time.start({
      ...(sourceMapper ? { sourceMapper } : {}),
      intervalMicros: this.options.samplingIntervalMicros,
      durationMillis: this.options.flushIntervalMs,
      withContexts: this.linksSamples,
      // CPU time per sample needs contexts; the wall-only set-up skips its cost.
      collectCpuTime: this.linksSamples && this.options.types.includes('cpu'),
      useCPED: this.frameCarriesContext,
      lineNumbers: false,
      // The workaround for a V8 bug (the profiler's event loop getting stuck) sleeps on the main
      // thread for up to two sampling intervals at every cut: 15–25 ms of event-loop pause per
      // window here (docs/performance.md). DataDog's own tracer runs with it off by default
      // (DD_PROFILING_V8_PROFILER_BUG_WORKAROUND); the bug is still detected at each cut and the
      // sampler restarted by @datadog/pprof (time-profiler handleStopRestart).
      workaroundV8Bug: false,
    });
    this.windowStart = Date.now();
    this.running = true;
  }

  /** The sampler's context slot, for the context manager. */
  readonly sink: LabelSink = {
    set: (labels) => {
      if (!this.running) return;
      this.lastContext = labels;
      this.time.setContext(labels);
    },
    runWith: (labels, fn) => (this.running ? this.time.runWithContext(labels ?? NO_SPAN, fn) : fn()),
  };

  /**
   * Maps compiled JavaScript frames back to their sources (TypeScript file and line) from the
   * app's source maps. The sampler takes a mapper only when it starts, and scanning for maps is
   * asynchronous, so once the maps are read the current window is cut at once and the sampler
   * restarted with the mapper — normally while the app is still starting, before it serves. The
   * mapper is loaded only for a folder that may hold maps.
   */
  async loadSourceMaps(dir: string): Promise<number> {
    if (!(await mayHaveSourceMaps(dir))) return 0;
    const { SourceMapper } = require(PPROF_SOURCE_MAPPER) as typeof import('@datadog/pprof/out/src/sourcemapper/sourcemapper.js');
    const mapper = await SourceMapper.create([dir]);
    if (mapper.infoMap.size > 0 && this.running) {
      this.pendingMapper = mapper;
      this.onCutWanted?.();
    }
    return mapper.infoMap.size;
  }

  /** Ends the current window; with `last`, sampling stops for good. */
  cut(last = false): ProfileWindow | undefined {
    if (!this.running) return undefined;
    if (last) this.running = false;
    const from = this.windowStart;
    const mapper = last ? undefined : this.pendingMapper;
    this.pendingMapper = undefined;
    const profile = this.time.stop(!last && !mapper, this.labelsOfSample, [LABEL_SPAN_NAME]);
    if (mapper) {
      this.start(mapper);
      // Without AsyncContextFrame the slot is global: the running code's labels carry over.
      if (!this.frameCarriesContext && this.lastContext !== undefined) this.time.setContext(this.lastContext);
    }
    const until = Date.now();
    this.windowStart = until;
    return { from, until, profile, types: this.options.types };
  }

  /**
   * What the last cut found of V8's profiler getting stuck (the bug whose workaround we leave
   * off): 0 nothing, 1 maybe (can be a false positive), 2 certainly. In both latter cases
   * @datadog/pprof has already restarted the sampler; the window may be incomplete.
   */
  get lastCutStuckSampler(): number {
    return this.running ? this.time.v8ProfilerStuckEventLoopDetected() : 0;
  }

  get isRunning(): boolean {
    return this.running;
  }

  private readonly labelsOfSample = ({ context }: { context?: { context?: object; timestamp?: bigint } }): Record<string, string> => {
    const labels = context?.context;
    if (!(labels instanceof SpanLabels)) return NO_LABELS;
    // Sample timestamps are epoch microseconds; one sampling interval of grace for clock skew.
    if (context?.timestamp !== undefined && !labels.covers(Number(context.timestamp), this.options.samplingIntervalMicros)) return NO_LABELS;
    return labels.toLabels(this.options.traceIdLabel);
  };
}

const NO_LABELS = Object.freeze({});
/** The sampler's context for code outside any span (its API takes an object): samples get no labels. */
const NO_SPAN = Object.freeze({});
