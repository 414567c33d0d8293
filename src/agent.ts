import type { Config } from './config.js';
import type { HttpSender } from './export/http-sender.js';
import { sendBeforeExit } from './export/final-flush.js';
import { endpointOf, type Outgoing } from './export/outgoing.js';
import type { PyroscopeExporter } from './export/pyroscope-exporter.js';
import { type Logger, reason } from './log.js';
import type { Profiler } from './profiler.js';
import type { Finisher } from './shutdown.js';
import type { Tracing } from './tracing.js';

export interface AgentParts {
  config: Config;
  log: Logger;
  sender: HttpSender;
  profiler: Profiler | undefined;
  exporter: PyroscopeExporter | undefined;
  tracing: Tracing | undefined;
}

/**
 * The running pieces inside the app and the two things done with them over time: cut a profile
 * window every flush interval, and flush everything once at the end. Every entry point catches
 * its own failures: nothing here may throw into the app.
 */
export class Agent implements Finisher {
  private timer: NodeJS.Timeout | undefined;
  /** running → flushing (async final flush under way) → done. The sync path may take over a flush under way. */
  private phase: 'running' | 'flushing' | 'done' = 'running';

  constructor(readonly parts: AgentParts) {}

  startWindows(): void {
    const { profiler, config } = this.parts;
    if (!profiler) return;
    this.timer = setInterval(() => this.exportWindow(), config.flushIntervalMs);
    this.timer.unref();
  }

  private exportWindow(): void {
    const { profiler, exporter, sender, log } = this.parts;
    try {
      const window = profiler?.cut();
      if (!window || !exporter) return;
      exporter.requests(window).then(
        (requests) => requests.forEach((r) => sender.enqueue(r)),
        (error: unknown) => log.warnOnce('encode', `could not encode a profile window: ${reason(error)}`),
      );
    } catch (error) {
      log.warnOnce('window', `could not collect a profile window: ${reason(error)}`);
    }
  }

  private stopWindows(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  async finishAsync(deadlineAt: number): Promise<void> {
    if (this.phase !== 'running') return;
    this.phase = 'flushing';
    this.stopWindows();
    const { profiler, exporter, sender, tracing, log } = this.parts;
    const work = (async () => {
      const window = profiler?.cut(true);
      if (window && exporter) for (const request of await exporter.requests(window)) sender.enqueue(request);
      tracing?.batcher?.flush();
      await Promise.all([sender.idle(Math.max(0, deadlineAt - Date.now())), tracing?.processor?.forceFlush()]);
      await tracing?.sdk.shutdown();
    })().catch((error: unknown) => log.debug(`final flush: ${reason(error)}`));
    await untilDeadline(work, deadlineAt);
    // The sync exit path may have taken over meanwhile.
    if (this.isDone()) return;
    this.phase = 'done';
    const left = sender.drain();
    this.reportUndelivered(left, left.length, Date.now() >= deadlineAt);
  }

  finishSync(deadlineAt: number): void {
    const { profiler, exporter, sender, tracing, log } = this.parts;
    if (this.phase === 'done') return;
    this.phase = 'done';
    this.stopWindows();
    const requests: Outgoing[] = sender.drain();
    try {
      const window = profiler?.cut(true);
      if (window && exporter) requests.push(...exporter.requestsSync(window));
    } catch (error) {
      log.warn(`could not collect the last profile window: ${reason(error)}`);
    }
    if (tracing?.batcher) requests.push(...tracing.batcher.drain());
    if (requests.length === 0) return;
    const result = sendBeforeExit(requests, deadlineAt);
    this.reportUndelivered(requests, result.failed, result.timedOut);
  }

  private isDone(): boolean {
    return this.phase === 'done';
  }

  private reportUndelivered(requests: Outgoing[], undelivered: number, late: boolean): void {
    if (undelivered === 0) return;
    const targets = [...new Set(requests.map((r) => endpointOf(r.url)))].join(', ');
    const deadline = late ? ` within the ${this.parts.config.shutdownTimeoutMs} ms shutdown deadline` : '';
    this.parts.log.warn(`final flush: ${undelivered} of ${requests.length} uploads to ${targets} not delivered${deadline}`);
  }
}

function untilDeadline(work: Promise<unknown>, deadlineAt: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, Math.max(0, deadlineAt - Date.now()));
    timer.unref();
    void work.finally(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
