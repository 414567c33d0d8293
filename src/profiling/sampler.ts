import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import type { TimeProfile } from '@datadog/pprof/out/src/v8-types.js';

const require = createRequire(import.meta.url);
/**
 * @datadog/pprof's native time profiler, without its JavaScript wrapper (`time-profiler.js`):
 * the wrapper turns a stopped profile into pprof in one synchronous call — a pause of the app's
 * event loop at every window (docs/performance.md, "Flush pauses and event-loop stalls") — and
 * creates its async-frame key where we cannot reach it. We take the raw tree instead and build the pprof in slices (time-profile.ts). The package
 * has no `exports` map, so this path is public to Node; the version is pinned, and every profiling
 * test goes through it.
 */
const PPROF_BINDINGS = '@datadog/pprof/out/src/time-profiler-bindings.js';

/**
 * How long stops that look stuck must cover, in a row, for V8's profiler to be taken as stuck.
 * `certain` is an empty profile: samples are being lost, so the sampler is restarted soon.
 * `maybe` is a profile that has its samples but lacks the non-tick one every profile starts with:
 * nothing is lost, and the same sign comes from V8's processing thread running behind (ticks
 * queued across the profile's start, the addon's own note on `detectV8Bug`), which under a busy
 * machine can last for seconds at start-up, while the code every module loads is being logged.
 * A stuck processor stays stuck, so waiting costs only that thread's spin a little longer; a
 * restart in error costs a re-log of all of V8's code, on the app's event loop.
 */
export const SUSPECT_MICROS = { certain: 1_000_000, maybe: 10_000_000 } as const;

/**
 * What a stop found of V8's profiler getting stuck (`found`: the addon's 0, 1 maybe, 2 certainly),
 * weighed with the stops before it: `stuck` is `found` once the stops that looked stuck in a row
 * (`suspectMicros` before this one, which lasted `durationMicros`) cover SUSPECT_MICROS for what
 * this one found, else 0; `suspectMicros` is what to carry to the next stop.
 */
export function judgeStuck(suspectMicros: number, found: number, durationMicros: number): { stuck: number; suspectMicros: number } {
  if (found === 0) return { stuck: 0, suspectMicros: 0 };
  const covered = suspectMicros + Math.max(0, durationMicros);
  const needed = found === 2 ? SUSPECT_MICROS.certain : SUSPECT_MICROS.maybe;
  return covered >= needed ? { stuck: found, suspectMicros: 0 } : { stuck: 0, suspectMicros: covered };
}

/**
 * How long a stall the sampler keeps every sample of. The native sampler keeps a record per sample
 * (its context, when it was taken, the thread's CPU time) in a buffer sized when it starts —
 * `2 × durationMillis / interval` records (wall.cc, `contexts_.reserve`) — emptied at every stop,
 * and it drops from the tree every sample it holds no record for: that time is lost, not left
 * unlabelled. Stops come at most a window apart while the event loop turns, and none while it is
 * blocked: sized by the window alone, a 5-second stall with 1-second windows kept 2 of its 5 seconds.
 * So the buffer holds `ms` of samples, at most `records` of them (48 bytes each, address space
 * until samples are written to it), and never fewer than two windows' worth.
 */
export const STALL_KEPT: StallKept = { ms: 300_000, records: 262_144 };

export interface StallKept {
  readonly ms: number;
  readonly records: number;
}

/**
 * The `durationMillis` to start the native sampler with, so that its buffer holds what `keep`
 * says, and the records the native side then reserves for it (whole milliseconds: `duration × 2 /
 * interval`, in microseconds, as wall.cc reckons it).
 */
export function sampleBuffer(windowMillis: number, intervalMicros: number, keep: StallKept = STALL_KEPT): { durationMillis: number; records: number } {
  const perMilli = 1000 / intervalMicros;
  const wanted = Math.max(2 * windowMillis * perMilli, Math.min(keep.ms * perMilli, keep.records));
  const durationMillis = Math.ceil((wanted * intervalMicros) / 2000);
  return { durationMillis, records: Math.floor((durationMillis * 2000) / intervalMicros) };
}

/** The native TimeProfiler's surface (bindings/profilers/wall.cc in DataDog/pprof-nodejs). */
interface NativeTimeProfiler {
  start(): void;
  /** Stops the current profile and returns its tree; with `restart`, a new profile starts first. */
  stop(restart: boolean): TimeProfile;
  /** Frees the native profiler; only once stopped without restart. */
  dispose(): void;
  /** The global context slot (no AsyncContextFrame), or the current frame's (with it). */
  context: unknown;
  /** An object the sampler can read `value` back from when it finds it in an async frame under its key. */
  createContextHolder(value: unknown): ContextHolder;
  /** 0 nothing, 1 maybe, 2 certainly: V8's profiler got stuck during the profile just stopped. */
  v8ProfilerStuckEventLoopDetected(): number;
  /** Shared fields; `state[constants.kSampleCount]` counts the records kept since the last stop, up to the buffer's size. */
  readonly state: Uint32Array;
}

interface NativeBindings {
  TimeProfiler: new (options: object) => NativeTimeProfiler;
  constants: { kSampleCount: number };
}

export interface SamplerOptions {
  intervalMicros: number;
  /** How long a window lasts: the sampler is stopped at least this often while the event loop turns. */
  windowMillis: number;
  /** How long a stall to keep every sample of (STALL_KEPT unless said). */
  keep?: StallKept;
  /** Record the context slot at every sample (needs SIGPROF: not on Windows). */
  withContexts: boolean;
  /** Thread CPU time per sample (needs contexts). */
  collectCpuTime: boolean;
  /** The context slot lives in AsyncContextFrame (Node 24+, or 22 with the flag). */
  useFrame: boolean;
}

/** What the sampler reads a context from in an async frame; the addon keeps the value at index 0 for JavaScript to read (wall.cc, `CreateContextHolder`). */
export interface ContextHolder {
  readonly 0: unknown;
}

/** What every context slot tells: whether a sample has been recorded with a context since a given moment. */
export interface SampleCount {
  /** Samples recorded with a context on this thread so far: never goes back, and moves at every stop (Sampler.samplesTaken). */
  samplesTaken(): number;
}

/** The sampler's context slot in the async frame (AsyncContextFrame: Node 24+, or 22 with the flag). */
export interface FrameSlot extends SampleCount {
  /** The key the sampler looks its holder up under in the current async frame. */
  readonly key: AsyncLocalStorage<object | undefined>;
  /** An object the sampler reads `value` from when it finds it under `key`; undefined when not sampling. */
  holder(value: object): ContextHolder | undefined;
}

/** The sampler's one global context slot (no AsyncContextFrame). */
export interface GlobalSlot extends SampleCount {
  /** Points the slot at `value` from now on. */
  set(value: object | undefined): void;
}

/** One running sampler: start once, cut with `stop(true)`, end with `stop(false)`. */
export class Sampler {
  private native: NativeTimeProfiler | undefined;
  /** The native profiler's shared fields, read once: `state` is a native getter, and `samplesTaken` runs twice a request. */
  private state: Uint32Array | undefined;
  /**
   * The async-frame key the native side looks its holder up under (AsyncContextFrame only). The
   * linking context manager keeps it pointing at the holder of the active span's labels
   * (span-link/frame-context.ts); it stays usable after sampling ends.
   */
  readonly frameKey: AsyncLocalStorage<object | undefined> | undefined;
  private stuck = 0;
  /** How long the stops in a row that looked stuck covered, microseconds. */
  private suspectMicros = 0;
  /** How many samples the native buffer keeps between two stops, and the index of its count in `state`. */
  private records = 0;
  private countField = 0;
  private dropped = false;
  /** What `samplesTaken` counted before the current profile: see there. */
  private samplesBefore = 0;

  constructor(private readonly options: SamplerOptions) {
    this.frameKey = options.useFrame ? new AsyncLocalStorage<object | undefined>() : undefined;
  }

  start(): void {
    const { TimeProfiler, constants } = require(PPROF_BINDINGS) as NativeBindings;
    const { withContexts, useFrame, intervalMicros } = this.options;
    const { durationMillis, records } = sampleBuffer(this.options.windowMillis, intervalMicros, this.options.keep);
    this.records = records;
    this.countField = constants.kSampleCount;
    this.native = new TimeProfiler({
      intervalMicros,
      durationMillis,
      lineNumbers: false,
      withContexts,
      collectCpuTime: withContexts && this.options.collectCpuTime,
      collectAsyncId: false,
      // The workaround for a V8 bug (the profiler's event loop getting stuck) sleeps on the main
      // thread for up to two sampling intervals at every cut: an event-loop pause per window
      // (docs/performance.md, "Flush pauses and event-loop stalls"). DataDog's own tracer runs with it off by default
      // (DD_PROFILING_V8_PROFILER_BUG_WORKAROUND); the bug is still detected at every cut and the
      // sampler restarted (`stop`).
      workaroundV8Bug: false,
      useCPED: withContexts && useFrame,
      CPEDKey: withContexts && useFrame ? this.frameKey : undefined,
      isMainThread: (process.getBuiltinModule('node:worker_threads') as typeof import('node:worker_threads')).isMainThread,
    });
    this.state = this.native.state;
    this.native.start();
    // A SIGPROF arriving while Node tears the isolate down can crash it: stop first. Appended, so
    // the agent's own exit handler (prepended) takes the last window before this runs.
    process.once('exit', () => {
      try {
        this.stop(false);
      } catch {
        // Exiting anyway; the app's exit code is not ours to change.
      }
    });
  }

  /**
   * Ends the current profile and returns the sampler's tree of it. With `restart` sampling goes
   * on into a new profile with no gap; if V8's profiler was found stuck it is torn down and
   * started afresh, as @datadog/pprof's own wrapper does.
   *
   * The addon's signs of it (`detectV8Bug`, wall.cc) — a profile with no sample at all
   * (certain), or without the non-tick sample every profile starts with (possible) — misread
   * short profiles: ticks reach a profile through V8's processing thread, and ticks queued there
   * past the profile's start are dropped (the addon's own note on that check). Seen with stops
   * 250 ms to 1 s apart (gather-pace.ts): apps starting their own OpenTelemetry SDK read as
   * certainly stuck, an express app under load on Node 22 as possibly stuck — and a restart
   * re-logs all of V8's code. So such stops count only once they cover
   * `SUSPECT_MICROS` in a row (`judgeStuck`).
   */
  stop(restart: boolean): TimeProfile | undefined {
    const native = this.native;
    if (native === undefined) return undefined;
    const recorded = this.state?.[this.countField] ?? 0;
    this.dropped = this.options.withContexts && recorded >= this.records;
    this.samplesBefore += recorded + 1;
    const profile = native.stop(restart);
    if (restart) {
      ({ stuck: this.stuck, suspectMicros: this.suspectMicros } = judgeStuck(
        this.suspectMicros,
        native.v8ProfilerStuckEventLoopDetected(),
        profile.endTime - profile.startTime,
      ));
      if (this.stuck > 0) {
        native.stop(false);
        native.start();
      }
    } else {
      this.stuck = 0;
      native.dispose();
      this.native = undefined;
      this.state = undefined;
    }
    return profile;
  }

  /** Whether the native buffer was full at the last stop: the samples after it filled were dropped (STALL_KEPT). */
  get droppedAtLastStop(): boolean {
    return this.dropped;
  }

  /** How long a stall the native buffer keeps, milliseconds. */
  get keepsMillis(): number {
    return (this.records * this.options.intervalMicros) / 1000;
  }

  /** What the last `stop(true)` found of V8's profiler getting stuck: 0, 1 (maybe) or 2 (certainly). */
  get stuckAtLastStop(): number {
    return this.stuck;
  }

  /**
   * Samples recorded with a context on this thread so far. The native count (`kSampleCount`, moved
   * by wall.cc's `PushContext` each time it keeps a sample's context) starts again at every stop, so
   * the counts of the profiles before are added, plus one a stop: a span whose life held a stop
   * always sees this move, even if no sample was taken in it — a stop's samples can land between
   * the count read here and the native stop, unseen by JavaScript.
   */
  samplesTaken(): number {
    return this.samplesBefore + (this.state?.[this.countField] ?? 0);
  }

  /** Sets the context slot (the global one, or the current frame's in place). */
  set(value: object | undefined): void {
    if (this.native !== undefined) this.native.context = value;
  }

  /**
   * An object the sampler reads `value` from when it finds it in an async frame under `frameKey`;
   * undefined while the sampler is not running (there is no native profiler to make it).
   */
  holder(value: object): ContextHolder | undefined {
    return this.frameKey === undefined ? undefined : this.native?.createContextHolder(value);
  }
}
