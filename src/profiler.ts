import { createRequire } from 'node:module';
import type { ProfileType } from './config.js';
import { type Profile, splitTimeProfile } from './pprof-split.js';
import type { LabelSink } from './span-link/context.js';
import { SpanLabels } from './span-link/labels.js';
import { LABEL_SPAN_NAME } from './wire.js';

const require = createRequire(import.meta.url);
type Pprof = typeof import('@datadog/pprof');

export interface ProfileWindow {
  /** Epoch milliseconds. */
  from: number;
  until: number;
  profiles: Map<ProfileType, Profile>;
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
  private readonly pprof: Pprof;
  private windowStart = 0;
  private running = false;
  /** True when AsyncContextFrame carries the sampler's context (reference §3). */
  readonly frameCarriesContext: boolean;
  /** False where the sampler cannot attach contexts (no SIGPROF on Windows): profiles, no links. */
  readonly linksSamples: boolean;

  constructor(private readonly options: ProfilerOptions) {
    this.pprof = require('@datadog/pprof') as Pprof;
    const acf = require('@datadog/pprof/out/src/async-context-frame') as { isAsyncContextFrameActive(): boolean };
    this.linksSamples = process.platform !== 'win32';
    this.frameCarriesContext = this.linksSamples && acf.isAsyncContextFrameActive();
  }

  start(): void {
    this.pprof.time.start({
      intervalMicros: this.options.samplingIntervalMicros,
      durationMillis: this.options.flushIntervalMs,
      withContexts: this.linksSamples,
      // CPU time per sample needs contexts; the wall-only set-up skips its cost.
      collectCpuTime: this.linksSamples && this.options.types.includes('cpu'),
      useCPED: this.frameCarriesContext,
      lineNumbers: false,
    });
    this.windowStart = Date.now();
    this.running = true;
  }

  /** The sampler's context slot, for the context manager. */
  readonly sink: LabelSink = {
    set: (labels) => {
      if (this.running) this.pprof.time.setContext(labels);
    },
  };

  /** Ends the current window; with `last`, sampling stops for good. */
  cut(last = false): ProfileWindow | undefined {
    if (!this.running) return undefined;
    if (last) this.running = false;
    const from = this.windowStart;
    const profile = this.pprof.time.stop(!last, this.labelsOfSample, [LABEL_SPAN_NAME]);
    const until = Date.now();
    this.windowStart = until;
    return { from, until, profiles: splitTimeProfile(profile, this.options.types) };
  }

  get isRunning(): boolean {
    return this.running;
  }

  private readonly labelsOfSample = ({ context }: { context?: { context?: object } }): Record<string, string> => {
    const labels = context?.context;
    return labels instanceof SpanLabels ? labels.toLabels(this.options.traceIdLabel) : NO_LABELS;
  };
}

const NO_LABELS = Object.freeze({});
