import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import type { Config } from '../config/index.js';
import { untilDeadline } from '../util/deadline.js';
import type { Destination, FinalData } from '../export/destination.js';
import type { SpanBatcher } from '../tracing/span-batcher.js';
import type { LogBatcher } from '../tracing/log-batcher.js';
import type { PeriodicReader } from '../tracing/metric-reader.js';
import { type Logger, reason } from '../log.js';
import { GATHER, gatherNow, nextGatherMs } from '../profiling/gather-pace.js';
import type { Profiler, ProfileWindow } from '../profiling/profiler.js';
import type { Finisher } from './shutdown.js';
import { WindowHold } from '../span-link/window-hold.js';
import { MAIN_THREAD_NAME } from '../wire.js';
import type { Threads } from '../threads/main-thread.js';

/** What the preload leaves running in the app: the agent (none when it could not start) and its exit hooks. */
export interface Started {
  agent: Agent | undefined;
  config: Config;
  log: Logger;
  /** Detaches the exit hooks (programmatic shutdown). */
  uninstall: () => void;
}

export interface AgentParts {
  config: Config;
  log: Logger;
  destination: Destination;
  profiler: Profiler | undefined;
  /** The other threads' agents, whose samples go into the profiler's windows. */
  threads?: Threads | undefined;
  /** The event-loop block watch, when it runs (stopped at the end, after the last cut has attributed what waited). */
  blocks?: { stop(): void } | undefined;
  /** Our span batcher, when spans go to the destination. */
  batcher: SpanBatcher | undefined;
  /** Our log record batcher, when log records go to the destination. */
  logBatcher: LogBatcher | undefined;
  /** Our metric reader, when metrics go to the destination. */
  metricReader: PeriodicReader | undefined;
  /** The exporter pipelines we do not own (grpc, console), flushed asynchronously only. */
  processors: SpanProcessor[];
  sdk: { shutdown(): Promise<void> } | undefined;
}

/**
 * The running pieces inside the app and the things done with them over time: cut a profile
 * window every flush interval (gathering the sampler's tree a few times in between, at the pace
 * gather-pace.ts sets), and deliver everything owed once at the end. Every entry point catches its
 * own failures: nothing here may throw into the app.
 */
export class Agent implements Finisher {
  private timer: NodeJS.Timeout | undefined;
  private gatherTimer: NodeJS.Timeout | undefined;
  /** An extra gather asked for after an event-loop stall (gatherSoon). */
  private soonTimer: NodeJS.Timeout | undefined;
  /** When the sampler was last stopped (a gather or a cut), and when the next cut is due: performance.now() milliseconds. */
  private lastStopAt = 0;
  private nextCutAt = 0;
  /** running → flushing (async final flush under way) → done. The sync exit path may take over a flush under way. */
  private phase: 'running' | 'flushing' | 'done' = 'running';
  private readonly hold: WindowHold;

  constructor(readonly parts: AgentParts) {
    this.hold = new WindowHold((window) => parts.destination.profiles(window));
  }

  startWindows(): void {
    const { profiler, config } = this.parts;
    if (!profiler) return;
    this.timer = setInterval(() => this.exportWindow(), config.flushIntervalMs);
    this.timer.unref();
    this.stopped();
    if (profiler.time !== undefined && config.flushIntervalMs > GATHER.firstMs) this.gatherAfter(GATHER.firstMs);
  }

  /** The sampler was just stopped (or started): the next cut is one flush interval away. */
  private stopped(): void {
    this.lastStopAt = performance.now();
    this.nextCutAt = this.lastStopAt + this.parts.config.flushIntervalMs;
  }

  private gatherAfter(waitMs: number): void {
    const { profiler, config, log } = this.parts;
    this.gatherTimer = setTimeout(() => {
      let nextMs = waitMs;
      try {
        const now = performance.now();
        if (gatherNow(now, this.lastStopAt, this.nextCutAt)) {
          nextMs = nextGatherMs(waitMs, profiler?.gather() ?? 0, config.flushIntervalMs);
          this.lastStopAt = now;
          this.reportSampler();
        }
      } catch (error) {
        log.warnOnce('window', `could not collect a profile window: ${reason(error)}`);
      }
      if (this.gatherTimer !== undefined) this.gatherAfter(nextMs);
    }, waitMs);
    this.gatherTimer.unref();
  }

  /**
   * A stall of the event loop waits for the sampler's tree that holds its samples
   * (src/blocks/block-watch.ts): a gather as soon as the pace allows — the floor after the last
   * stop — unless the window's cut comes first. The regular gathers keep their own pace.
   */
  gatherSoon(): void {
    if (this.soonTimer !== undefined || this.phase !== 'running' || this.timer === undefined) return;
    const { profiler, log } = this.parts;
    const waitMs = Math.max(0, this.lastStopAt + GATHER.floorMs - performance.now());
    this.soonTimer = setTimeout(() => {
      this.soonTimer = undefined;
      try {
        const now = performance.now();
        if (gatherNow(now, this.lastStopAt, this.nextCutAt)) {
          profiler?.gather();
          this.lastStopAt = now;
          this.reportSampler();
        }
      } catch (error) {
        log.warnOnce('window', `could not collect a profile window: ${reason(error)}`);
      }
    }, waitMs).unref();
  }

  private exportWindow(): void {
    const { profiler, log, threads } = this.parts;
    this.stopped();
    try {
      const window = profiler?.cut();
      if (window) this.hold.add(window);
      threads?.sweep();
      this.reportSampler();
    } catch (error) {
      log.warnOnce('window', `could not collect a profile window: ${reason(error)}`);
    }
  }

  /** What the last stop found wrong with the sampler: stuck, or samples dropped in a stall. */
  private reportSampler(): void {
    const time = this.parts.profiler?.time;
    if (time === undefined) return;
    const stuck = time.stuckAtLastStop;
    const message = 'the V8 profiler stopped sampling (a known V8 bug); the sampler was restarted, the last window may be incomplete';
    if (stuck === 2) this.parts.log.warnOnce('sampler-stuck', message);
    else if (stuck === 1) this.parts.log.debug(`${message} (possibly)`);
    const dropped = time.droppedAtLastStop(MAIN_THREAD_NAME);
    if (dropped !== undefined) this.parts.log.warnOnce('sampler-dropped', dropped);
  }

  /**
   * What is owed at the end: the window held for its spans' names goes to the destination now,
   * and the last window (sampling stops), the spans and log records still buffered and `metrics`,
   * the last collection, are returned.
   */
  private takeLast(metrics: ResourceMetrics | undefined): FinalData {
    const { profiler, batcher, logBatcher, log, destination } = this.parts;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    clearTimeout(this.gatherTimer);
    this.gatherTimer = undefined;
    clearTimeout(this.soonTimer);
    this.soonTimer = undefined;
    this.parts.blocks?.stop();
    const held = this.hold.take();
    if (held) destination.profiles(held);
    let window: ProfileWindow | undefined;
    try {
      window = profiler?.cut(true);
    } catch (error) {
      log.warn(`could not collect the last profile window: ${reason(error)}`);
    }
    return {
      window,
      spanBatches: batcher?.takeBuffered() ?? [],
      encodedSpanBatches: batcher?.takeEncoded() ?? [],
      logBatches: logBatcher?.takeBuffered() ?? [],
      metrics,
    };
  }

  /**
   * The heap limit was hit (called synchronously, wherever the app's code was running): the heap
   * profile of this moment is kept now, since the process most likely dies of it next without
   * running an exit handler.
   */
  outOfMemory(window: ProfileWindow): void {
    const { destination, log } = this.parts;
    log.warn('the JavaScript heap limit was hit: the heap profile of this moment is being kept (the app may die of it next)');
    try {
      destination.outOfMemorySync(window);
    } catch (error) {
      log.debug(`out of memory: ${reason(error)}`);
    }
  }

  async finishAsync(deadlineAt: number): Promise<void> {
    if (this.phase !== 'running') return;
    this.phase = 'flushing';
    const { destination, processors, sdk, log } = this.parts;
    try {
      const [metrics] = await Promise.all([
        this.lastMetrics(deadlineAt),
        this.parts.threads?.collectAsync(deadlineAt).catch((error: unknown) => log.debug(`workers' last samples: ${reason(error)}`)),
      ]);
      if (this.takenOver()) return;
      await destination.finishAsync(this.takeLast(metrics), deadlineAt);
      await untilDeadline(Promise.all([...processors.map((processor) => processor.forceFlush()), sdk?.shutdown()]), deadlineAt);
    } catch (error) {
      log.debug(`final flush: ${reason(error)}`);
    }
    this.phase = 'done';
  }

  finishSync(deadlineAt: number): void {
    if (this.phase === 'done') return;
    this.phase = 'done';
    try {
      this.parts.threads?.collectSync(deadlineAt);
    } catch (error) {
      this.parts.log.debug(`workers' last samples: ${reason(error)}`);
    }
    this.parts.destination.finishSync(this.takeLast(this.lastMetricsSync()), deadlineAt);
  }

  /** process.exit() while the final flush waited: the exit path (finishSync) took everything over. */
  private takenOver(): boolean {
    return this.phase === 'done';
  }

  /** The last metrics collection, observable instruments' callbacks run, within the deadline; else what can be taken synchronously. */
  private async lastMetrics(deadlineAt: number): Promise<ResourceMetrics | undefined> {
    const reader = this.parts.metricReader;
    if (!reader) return undefined;
    let collected: { metrics: ResourceMetrics | undefined } | undefined;
    const collecting = reader.collectNow().then(
      (metrics) => void (collected = { metrics }),
      (error: unknown) => this.parts.log.debug(`final metrics collection: ${reason(error)}`),
    );
    await untilDeadline(collecting, deadlineAt);
    return collected ? collected.metrics : this.lastMetricsSync();
  }

  /** The last metrics collection at `process.exit()`, where no callback can be awaited. */
  private lastMetricsSync(): ResourceMetrics | undefined {
    try {
      return this.parts.metricReader?.collectSync();
    } catch (error) {
      this.parts.log.warn(`could not collect the last metrics: ${reason(error)}`);
      return undefined;
    }
  }
}
