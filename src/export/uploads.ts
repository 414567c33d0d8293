import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { type Logger, reason } from '../log.js';
import type { ProfileWindow } from '../profiling/profiler.js';
import { untilDeadline } from '../util/deadline.js';
import type { Destination, FinalData, SpanEncoder } from './destination.js';
import { type EncodedSpan, encodeSpans } from './otlp/otlp-trace-encode.js';
import type { HttpSender } from './transport/http-sender.js';
import { type Outgoing, routeOf } from './transport/outgoing.js';
import type { ProxySettings } from '../config/proxy.js';
import type { Upstream } from './upstream.js';

/**
 * The remote destination: a list of upstreams (Pyroscope's /ingest, OTLP traces, …), each
 * encoding its own wire format, all sending through one HttpSender — one queue, one retry policy,
 * one final flush. An empty list is valid: profiles are then sampled for span links only.
 */
export class Uploads implements Destination {
  constructor(
    private readonly sender: HttpSender,
    private readonly upstreams: readonly Upstream[],
    private readonly log: Logger,
    private readonly exit: { shutdownTimeoutMs: number; proxy: ProxySettings | undefined },
  ) {}

  /**
   * Loads what uploads need — undici's parts and each upstream's encoder — inside the app's first
   * `listen()` (boot.ts, agent/first-listen.ts), rather than at the first upload in the middle of
   * its traffic, where loading them holds its event loop. Not in the app's first turns of the event
   * loop either: an app that listens in its main module serves from its first turn, and work left
   * for those turns ran beside its first, coldest requests (the big app's first second of load,
   * docs/performance.md). A process that never listens loads them at its first upload instead, and
   * starts without them (docs/performance.md, "Start-up"). A failure is left for the first real
   * upload to report.
   */
  prepare(): void {
    if (this.upstreams.length === 0) return;
    try {
      this.sender.prepare();
      for (const upstream of this.upstreams) upstream.prepare();
    } catch {
      // Left to the first upload, which reports it.
    }
  }

  /** What earlier processes kept as they died (the heap profile at their limit), sent at start. */
  sendKept(): void {
    for (const upstream of this.upstreams) {
      try {
        upstream.sendKept?.();
      } catch (error) {
        this.log.debug(`could not send what an earlier process kept: ${reason(error)}`);
      }
    }
  }

  profiles(window: ProfileWindow): void {
    for (const upstream of this.upstreams) upstream.profiles?.(window);
  }

  renameService(name: string): void {
    for (const upstream of this.upstreams) upstream.renameService?.(name);
  }

  spans(batch: ReadableSpan[]): void {
    for (const upstream of this.upstreams) upstream.spans?.(batch);
  }

  /** Spans encoded as they end when every upstream that takes spans takes them so (OTLP/protobuf). */
  spanEncoder(): SpanEncoder | undefined {
    const takers = this.upstreams.filter((upstream) => upstream.spans !== undefined || upstream.encodedSpans !== undefined);
    if (takers.length === 0 || !takers.every((upstream) => upstream.takesEncodedSpans)) return undefined;
    return { encode: encodeSpans, onBatch: (batch) => this.encodedSpans(batch) };
  }

  private encodedSpans(batch: EncodedSpan[]): void {
    for (const upstream of this.upstreams) upstream.encodedSpans?.(batch);
  }

  logRecords(batch: ReadableLogRecord[]): void {
    for (const upstream of this.upstreams) upstream.logRecords?.(batch);
  }

  metrics(collection: ResourceMetrics): void {
    for (const upstream of this.upstreams) upstream.metrics?.(collection);
  }

  outOfMemorySync(window: ProfileWindow): void {
    for (const upstream of this.upstreams) {
      try {
        upstream.outOfMemorySync?.(window);
      } catch (error) {
        this.log.debug(`out of memory: could not keep the heap profile: ${reason(error)}`);
      }
    }
  }

  async finishAsync(last: FinalData, deadlineAt: number): Promise<void> {
    this.sender.beginFinalFlush();
    const work = (async () => {
      if (last.window) this.profiles(last.window);
      for (const batch of last.spanBatches) this.spans(batch);
      for (const batch of last.encodedSpanBatches ?? []) this.encodedSpans(batch);
      for (const batch of last.logBatches) this.logRecords(batch);
      if (last.metrics) this.metrics(last.metrics);
      await Promise.all(this.upstreams.map((upstream) => upstream.settle()));
      await this.sender.idle(Math.max(0, deadlineAt - Date.now()));
    })();
    await untilDeadline(work, deadlineAt);
    const left = this.sender.drain();
    this.reportUndelivered(left, left.length, Date.now() >= deadlineAt);
  }

  finishSync(last: FinalData, deadlineAt: number): void {
    const requests = this.sender.drain();
    for (const upstream of this.upstreams) {
      try {
        requests.push(...upstream.owedSync(last).map((request) => this.sender.sendable(request)));
      } catch (error) {
        this.log.warn(`final flush: could not encode what is owed: ${reason(error)}`);
      }
    }
    if (requests.length === 0) return;
    const result = this.sender.sendBeforeExit(requests, deadlineAt);
    this.reportUndelivered(requests, result.failed, result.timedOut);
  }

  private reportUndelivered(requests: Outgoing[], undelivered: number, late: boolean): void {
    if (undelivered === 0) return;
    const targets = [...new Set(requests.map((r) => routeOf(r.url, this.exit.proxy)))].join(', ');
    const noServer = this.sender.noServerAtExit();
    const why = noServer !== undefined ? `: no server there (${noServer})` : late ? ` within the ${this.exit.shutdownTimeoutMs} ms shutdown deadline` : '';
    this.log.warn(`final flush: ${undelivered} of ${requests.length} uploads to ${targets} not delivered${why}`);
  }
}
