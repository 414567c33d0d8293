import type { Dispatcher } from 'undici';
import { createRequire } from 'node:module';
import { ROOT_CONTEXT, context } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import { type Logger, reason } from '../log.js';
import { type Outgoing, endpointOf, isRetryableStatus, retryAfterMs } from './outgoing.js';

const require = createRequire(import.meta.url);

export interface SenderOptions {
  /** Per-request timeout (headers and body). */
  timeoutMs: number;
  /** Most requests kept waiting; beyond it the oldest is dropped (and counted). */
  maxQueued: number;
  log: Logger;
  /** First retry delay; doubles per failure up to maxBackoffMs. */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
}

export interface SenderStats {
  sent: number;
  dropped: number;
  failedAttempts: number;
}

/**
 * Sends Outgoing requests one at a time, in order, off the app's critical path. A failure that
 * may pass (network error, timeout, 5xx, 429) keeps the request at the head of the queue and
 * retries with backoff (Retry-After honoured), so windows queued during an outage are delivered
 * once the backend is back; a request the server rejects (other 4xx) is dropped. The queue is
 * bounded: when full, the oldest request goes, and that is counted. Each failure mode is warned
 * about once until it recovers.
 */
export class HttpSender {
  private readonly queue: Outgoing[] = [];
  private running = false;
  private closed = false;
  private inFlight: Outgoing | undefined;
  private abort: AbortController | undefined;
  private backoffTimer: NodeJS.Timeout | undefined;
  private wakeBackoff: (() => void) | undefined;
  private failures = 0;
  private dispatcher: Dispatcher | undefined;
  private readonly idleWaiters: (() => void)[] = [];
  readonly stats: SenderStats = { sent: 0, dropped: 0, failedAttempts: 0 };

  constructor(private readonly options: SenderOptions) {}

  enqueue(request: Outgoing): void {
    if (this.closed) return;
    this.queue.push(request);
    while (this.queue.length > this.options.maxQueued) {
      const dropped = this.queue.shift()!;
      this.stats.dropped++;
      this.options.log.warnOnce(`queue-full:${dropped.kind}`, `${dropped.kind} queue is full (${this.options.maxQueued} requests waiting for ${endpointOf(dropped.url)}); dropping the oldest. Dropped so far: ${this.stats.dropped}`);
    }
    // Our own requests must not be traced (the undici instrumentation would make spans of the
    // span uploads) nor inherit whatever span happened to enqueue them.
    if (!this.running) context.with(suppressTracing(ROOT_CONTEXT), () => void this.run());
  }

  /** Resolves when nothing is queued or in flight (or after `timeoutMs`). */
  idle(timeoutMs: number): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      timer.unref();
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
      // A request waiting out a backoff would otherwise sit there past the deadline.
      this.wakeBackoff?.();
    });
  }

  /**
   * Stops sending and hands back everything not yet delivered, the request in flight first:
   * the final flush sends them synchronously. The in-flight request may have reached the server
   * already; sending it again risks a duplicate, dropping it risks a loss, and we promised no loss.
   */
  drain(): Outgoing[] {
    this.closed = true;
    this.abort?.abort();
    if (this.backoffTimer) clearTimeout(this.backoffTimer);
    const pending = this.inFlight ? [this.inFlight, ...this.queue] : [...this.queue];
    this.queue.length = 0;
    this.inFlight = undefined;
    return pending;
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (!this.closed && this.queue.length > 0) {
        const request = this.queue[0]!;
        this.inFlight = request;
        const outcome = await this.attempt(request);
        this.inFlight = undefined;
        if (this.closed) break;
        if (outcome.kind === 'retry') {
          this.failures++;
          this.stats.failedAttempts++;
          if (this.idleWaiters.length > 0) break; // shutting down: the final flush takes over
          await this.backoff(outcome.afterMs);
          continue;
        }
        this.queue.shift();
        if (outcome.kind === 'sent') {
          this.stats.sent++;
          if (this.failures > 0 && this.options.log.clear(`upload:${request.kind}`)) {
            this.options.log.info(`${request.kind} uploads to ${endpointOf(request.url)} work again`);
          }
          this.failures = 0;
        } else {
          this.stats.dropped++;
        }
      }
    } finally {
      this.running = false;
      for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }

  private async attempt(request: Outgoing): Promise<{ kind: 'sent' } | { kind: 'rejected' } | { kind: 'retry'; afterMs: number | undefined }> {
    const { log } = this.options;
    const endpoint = endpointOf(request.url);
    this.abort = new AbortController();
    try {
      const { request: send } = require('undici') as typeof import('undici');
      const response = await send(request.url, {
        method: 'POST',
        headers: request.headers,
        body: request.body,
        signal: this.abort.signal,
        headersTimeout: this.options.timeoutMs,
        bodyTimeout: this.options.timeoutMs,
        dispatcher: this.getDispatcher(),
      });
      const text = (await response.body.text()).slice(0, 200).replace(/\s+/g, ' ').trim();
      if (response.statusCode >= 200 && response.statusCode < 300) return { kind: 'sent' };
      const detail = `${endpoint} answered ${response.statusCode}${text ? `: ${text}` : ''}`;
      if (isRetryableStatus(response.statusCode)) {
        log.warnOnce(`upload:${request.kind}`, `${request.kind} upload failed (${detail}); retrying, the app is not affected`);
        return { kind: 'retry', afterMs: retryAfterMs(response.headers['retry-after'], Date.now(), this.maxBackoff()) };
      }
      log.warnOnce(`rejected:${request.kind}:${response.statusCode}`, `${request.kind} upload rejected (${detail}); dropping ${request.what}`);
      return { kind: 'rejected' };
    } catch (error) {
      if (this.closed) return { kind: 'retry', afterMs: 0 };
      log.warnOnce(`upload:${request.kind}`, `${request.kind} upload to ${endpoint} failed: ${reason(error)}; retrying, the app is not affected`);
      return { kind: 'retry', afterMs: undefined };
    } finally {
      this.abort = undefined;
    }
  }

  private getDispatcher(): Dispatcher {
    if (!this.dispatcher) {
      const { Agent, buildConnector } = require('undici') as typeof import('undici');
      const connect = buildConnector({ timeout: this.options.timeoutMs });
      this.dispatcher = new Agent({
        keepAliveTimeout: 4_000,
        // Our sockets must never keep the app alive, not even mid-request: when the app is done,
        // the exit path flushes whatever is still pending within the shutdown deadline. undici
        // re-refs busy sockets, so ref is neutralised on the sockets we own.
        connect: (options, callback) =>
          connect(options, (error, socket) => {
            if (socket) {
              socket.unref();
              socket.ref = () => socket;
            }
            callback(error as Error & null, socket as never);
          }),
      });
    }
    return this.dispatcher;
  }

  private maxBackoff(): number {
    return this.options.maxBackoffMs ?? 30_000;
  }

  private backoff(requestedMs: number | undefined): Promise<void> {
    const base = this.options.baseBackoffMs ?? 500;
    const exponential = Math.min(base * 2 ** Math.min(this.failures - 1, 16), this.maxBackoff());
    const delay = requestedMs ?? exponential * (0.75 + Math.random() * 0.5);
    return new Promise<void>((resolve) => {
      this.wakeBackoff = () => {
        if (this.backoffTimer) clearTimeout(this.backoffTimer);
        this.wakeBackoff = undefined;
        resolve();
      };
      this.backoffTimer = setTimeout(this.wakeBackoff, delay);
      this.backoffTimer.unref();
    });
  }
}
