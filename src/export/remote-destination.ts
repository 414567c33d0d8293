import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Config } from '../config.js';
import { type Logger, reason } from '../log.js';
import type { ProfileWindow } from '../profiling/profiler.js';
import type { Destination, FinalData } from './destination.js';
import type { HttpSender } from './transport/http-sender.js';
import { otlpRequestBuilder } from './otlp/otlp-request.js';
import { type Outgoing, routeOf } from './transport/outgoing.js';
import { PyroscopeExporter } from './pyroscope/pyroscope-exporter.js';
import { encodeSync, prepareEncoder, WindowEncoder } from '../profiling/window-encoder.js';
import { untilDeadline } from '../util/deadline.js';

/**
 * The backends: profile windows to Pyroscope's /ingest, span batches to OTLP/HTTP, both through
 * one HttpSender (one queue, one retry policy). Either half may be absent: no server address
 * means profiles are sampled for linking but not uploaded; grpc/console spans bypass us.
 */
export class RemoteDestination implements Destination {
  private readonly exporter: PyroscopeExporter | undefined;
  private readonly toRequest: ReturnType<typeof otlpRequestBuilder> | undefined;
  private readonly encoder: WindowEncoder;

  constructor(
    private readonly config: Config,
    private readonly sender: HttpSender,
    private readonly log: Logger,
  ) {
    this.encoder = new WindowEncoder(log);
    const server = config.pyroscope.serverAddress;
    this.exporter = server ? new PyroscopeExporter(config, server, log) : undefined;
    const ownsSpans = config.traces.exporter === 'otlp' && config.traces.protocol !== 'grpc';
    this.toRequest = ownsSpans ? otlpRequestBuilder(config.traces) : undefined;
    if (this.exporter || this.toRequest) setImmediate(() => this.prepare()).unref();
  }

  /**
   * Loads what uploads need — undici's parts, the OTLP serializer, zlib — in the app's first turn
   * of the event loop, right after its main module ran (before it serves), rather than at the first
   * upload, in the middle of its traffic: together ~50–150 ms of the event loop on a first use.
   * A failure here is left for the first real upload to report.
   */
  private prepare(): void {
    try {
      this.sender.prepare();
      this.toRequest?.prepare();
      if (this.exporter) prepareEncoder();
    } catch {
      // Reported by the first upload that needs the part.
    }
  }

  profiles(window: ProfileWindow): void {
    const exporter = this.exporter;
    if (!exporter) return;
    this.encoder.encode(
      window,
      (encoded, profiles) => exporter.requests(encoded, profiles).forEach((r) => this.sender.enqueue(r)),
      (error) => this.log.warnOnce('encode', `could not encode a profile window: ${reason(error)}`),
    );
  }

  renameService(name: string): void {
    this.exporter?.rename(name);
  }

  spans(batch: ReadableSpan[]): void {
    for (const request of this.toRequest?.(batch) ?? []) this.sender.enqueue(request);
  }

  async finishAsync(last: FinalData, deadlineAt: number): Promise<void> {
    this.sender.beginFinalFlush();
    const work = (async () => {
      if (last.window) this.profiles(last.window);
      for (const batch of last.spanBatches) this.spans(batch);
      await this.encoder.settle();
      await this.sender.idle(Math.max(0, deadlineAt - Date.now()));
    })();
    await untilDeadline(work, deadlineAt);
    const left = this.sender.drain();
    this.reportUndelivered(left, left.length, Date.now() >= deadlineAt);
  }

  finishSync(last: FinalData, deadlineAt: number): void {
    const requests = this.sender.drain();
    try {
      // Windows still encoding would never finish now: encode them here, then the last one.
      const windows = this.encoder.takePendingSync();
      if (last.window) windows.push([last.window, encodeSync(last.window)]);
      if (this.exporter) for (const [window, profiles] of windows) requests.push(...this.exporter.requests(window, profiles).map((r) => this.sender.sendable(r)));
    } catch (error) {
      this.log.warn(`could not encode the last profile window: ${reason(error)}`);
    }
    for (const batch of last.spanBatches) requests.push(...(this.toRequest?.(batch) ?? []));
    if (requests.length === 0) return;
    const result = this.sender.sendBeforeExit(requests, deadlineAt);
    this.reportUndelivered(requests, result.failed, result.timedOut);
  }

  private reportUndelivered(requests: Outgoing[], undelivered: number, late: boolean): void {
    if (undelivered === 0) return;
    const targets = [...new Set(requests.map((r) => routeOf(r.url, this.config.proxy)))].join(', ');
    const noServer = this.sender.noServerAtExit();
    const why = noServer !== undefined ? `: no server there (${noServer})` : late ? ` within the ${this.config.shutdownTimeoutMs} ms shutdown deadline` : '';
    this.log.warn(`final flush: ${undelivered} of ${requests.length} uploads to ${targets} not delivered${why}`);
  }
}
