import type { Dispatcher } from 'undici';
import { otelApi } from '../../vendor.js';
import { type Logger, reason } from '../../log.js';
import { type FlushResult, sendBeforeExit } from './final-flush.js';
import { createAgent } from './dispatcher.js';
import {
  MAX_REPLY_BYTES,
  type Outgoing,
  type Transport,
  endpointOf,
  isRetryableStatus,
  releaseReply,
  replyExcerpt,
  retryAfterMs,
  routeOf,
} from './outgoing.js';
import type { OriginTls } from './origin-tls.js';
import type { ProxySettings } from '../../config/proxy.js';
import { warmUpOnLoopback } from './loopback-warm-up.js';
import { ownTrafficContext } from './own-traffic.js';
import { loadUndici } from './undici-parts.js';
import { randomFraction } from '../../util/random.js';

export interface SenderOptions {
  /** Per-request timeout: connect, headers, body, and the whole attempt. */
  timeoutMs: number;
  /** Most requests kept waiting, over both pipelines; beyond it the oldest of the longest pipeline is dropped (and counted). */
  maxQueued: number;
  log: Logger;
  /** Accept any TLS certificate (PYRO_RUN_INSECURE_SKIP_TLS_VERIFY). */
  tlsSkipVerify?: boolean;
  /** Proxies (HTTP_PROXY, HTTPS_PROXY, NO_PROXY); none when undefined. */
  proxy?: ProxySettings | undefined;
  /** A CA and a client certificate for particular origins (origin-tls.ts); none when undefined. */
  originTls?: OriginTls[];
  /** First retry delay; doubles per failure up to maxBackoffMs. */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
}

export interface SenderStats {
  sent: number;
  dropped: number;
  failedAttempts: number;
}

/** During the final flush, a pipeline that was working retries a failure this soon (until the deadline). */
const SHUTDOWN_RETRY_MS = 100;

type Kind = Outgoing['kind'];
/** `noServer`: the failure says nothing is there to take the request (see NO_SERVER). */
type Outcome = { kind: 'sent' } | { kind: 'rejected'; status: number; detail: string } | { kind: 'retry'; afterMs: number | undefined; noServer?: string };

/**
 * Failures that mean no server is there, rather than one that is there but failing: refused, a name
 * that does not resolve, no route. At exit they end a pipeline's flush at once; any other failure
 * is retried until the deadline, since a server that is there may answer the next attempt.
 */
const NO_SERVER: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EHOSTUNREACH', 'ENETUNREACH']);

/** One pipeline (profiles or spans): its own order, its own retries, so a dead Pyroscope never holds spans back, nor the other way round. */
interface Lane {
  readonly kind: Kind;
  /** Waiting, oldest first. */
  readonly queue: Outgoing[];
  /** Being sent, or waiting out a backoff before it is sent again. */
  current: Outgoing | undefined;
  running: boolean;
  failures: number;
  /** The final flush began while this pipeline was failing: one last attempt, no retries. */
  downAtShutdown: boolean;
  /** The server took a request's fallback form where it refused the request: send fallbacks. */
  fallbackAdopted: boolean;
  abort: AbortController | undefined;
  backoffTimer: NodeJS.Timeout | undefined;
  wakeBackoff: (() => void) | undefined;
}

/**
 * Sends Outgoing requests off the app's critical path: one at a time and in order per pipeline
 * (profiles, spans), the two pipelines independent of each other. A failure that may pass
 * (network error, timeout, 5xx, 429) keeps the request at the head of its pipeline and retries
 * with backoff (Retry-After honoured), so windows queued during an outage are delivered once the
 * backend is back; a request the server rejects (other 4xx) is dropped. What waits is bounded:
 * when more than `maxQueued` requests wait, the oldest of the longest pipeline goes, and that is
 * counted. Each failure mode is warned about once until it recovers.
 */
export class HttpSender {
  private readonly lanes = new Map<Kind, Lane>();
  private closed = false;
  private shuttingDown = false;
  private dispatcher: Dispatcher | undefined;
  private readonly idleWaiters: (() => void)[] = [];
  private readonly transport: Transport;
  /** Why a pipeline gave up during the final flush, per endpoint: nothing was there. */
  private readonly gaveUp = new Map<string, string>();
  readonly stats: SenderStats = { sent: 0, dropped: 0, failedAttempts: 0 };

  constructor(private readonly options: SenderOptions) {
    this.transport = { timeoutMs: options.timeoutMs, tlsSkipVerify: options.tlsSkipVerify === true, proxy: options.proxy, originTls: options.originTls ?? [] };
    // The final flush at exit sends from a worker: it must connect exactly as we do.
    if (this.transport.tlsSkipVerify) {
      options.log.warn(
        'TLS certificate verification is off (PYRO_RUN_INSECURE_SKIP_TLS_VERIFY): anyone on the network path can impersonate the backends and read the uploads and their credentials',
      );
    }
  }

  enqueue(request: Outgoing): void {
    if (this.closed) return;
    const lane = this.lane(request.kind);
    lane.queue.push(request);
    this.enforceCap();
    // Our own requests are no telemetry of the app's, nor part of whatever span enqueued them.
    if (!lane.running) otelApi().context.with(ownTrafficContext(), () => void this.run(lane));
  }

  /**
   * From now on, requests are the final flush's (see idle): called before the last data is
   * enqueued, so its first failure is already judged as one at exit.
   */
  beginFinalFlush(): void {
    if (this.shuttingDown) return;
    for (const lane of this.lanes.values()) lane.downAtShutdown = lane.failures > 0;
    this.shuttingDown = true;
  }

  /**
   * The final flush: resolves when nothing is queued or in flight (or after `timeoutMs`). A
   * pipeline that was working retries a failure quickly until then (a blip at shutdown must not
   * lose the last window); one that was already failing gets one last attempt, so a backend known
   * to be down does not hold the exit up until the deadline. A pipeline whose server is not there
   * at all (refused, unresolvable: NO_SERVER) gives up at its first such failure.
   */
  idle(timeoutMs: number): Promise<void> {
    this.beginFinalFlush();
    if (!this.anyRunning()) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      timer.unref();
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
      // A request waiting out a backoff would otherwise sit there past the deadline.
      for (const lane of this.lanes.values()) lane.wakeBackoff?.();
    });
  }

  /**
   * Stops sending and hands back everything not yet delivered, each pipeline's current request
   * first: the final flush sends them synchronously. A request in flight may have reached the
   * server already; sending it again risks a duplicate, dropping it risks a loss, and we promised
   * no loss.
   */
  drain(): Outgoing[] {
    this.closed = true;
    const pending: Outgoing[] = [];
    for (const lane of this.lanes.values()) {
      lane.abort?.abort();
      // Ends the backoff wait, so the lane's loop sees `closed` and stops.
      lane.wakeBackoff?.();
      if (lane.current) pending.push(formFor(lane, lane.current));
      pending.push(...lane.queue.map((request) => formFor(lane, request)));
      lane.current = undefined;
      lane.queue.length = 0;
    }
    return pending;
  }

  /** Sends `requests` synchronously (from process 'exit' or a signal handler), the way this sender connects. */
  sendBeforeExit(requests: Outgoing[], deadlineAt: number): FlushResult {
    return sendBeforeExit(requests, deadlineAt, this.transport);
  }

  /** Why the final flush gave up where no server was there, or undefined. */
  noServerAtExit(): string | undefined {
    return this.gaveUp.size === 0 ? undefined : [...new Set(this.gaveUp.values())].join('; ');
  }

  /** `request` in the form its pipeline sends (see Outgoing.fallback): for requests made after drain(). */
  sendable(request: Outgoing): Outgoing {
    const lane = this.lanes.get(request.kind);
    return lane ? formFor(lane, request) : request;
  }

  /** Requests waiting (not counting the one each pipeline is sending): for tests and diagnostics. */
  get waiting(): number {
    let n = 0;
    for (const lane of this.lanes.values()) n += lane.queue.length;
    return n;
  }

  private lane(kind: Kind): Lane {
    let lane = this.lanes.get(kind);
    if (!lane) {
      lane = {
        kind,
        queue: [],
        current: undefined,
        running: false,
        failures: 0,
        downAtShutdown: false,
        fallbackAdopted: false,
        abort: undefined,
        backoffTimer: undefined,
        wakeBackoff: undefined,
      };
      this.lanes.set(kind, lane);
    }
    return lane;
  }

  private anyRunning(): boolean {
    for (const lane of this.lanes.values()) if (lane.running) return true;
    return false;
  }

  /** Over the cap: the longest pipeline is the one that is stuck; its oldest waiting request goes. */
  private enforceCap(): void {
    while (this.waiting > this.options.maxQueued) {
      let longest: Lane | undefined;
      for (const lane of this.lanes.values()) if (!longest || lane.queue.length > longest.queue.length) longest = lane;
      const dropped = longest!.queue.shift()!;
      this.stats.dropped++;
      this.options.log.warnOnce(
        `queue-full:${dropped.kind}`,
        `${dropped.kind} queue is full (${this.options.maxQueued} requests waiting; ${endpointOf(dropped.url)} is not taking them); dropping the oldest. Dropped so far: ${this.stats.dropped}`,
      );
    }
  }

  private async run(lane: Lane): Promise<void> {
    lane.running = true;
    const { log } = this.options;
    try {
      while (!this.closed) {
        const request = lane.current ?? lane.queue.shift();
        if (!request) break;
        lane.current = request;
        const outcome = await this.send(lane, request);
        if (this.closed) break;
        if (outcome.kind === 'retry') {
          lane.failures++;
          this.stats.failedAttempts++;
          if (this.shuttingDown) {
            if (outcome.noServer !== undefined) {
              this.gaveUp.set(endpointOf(request.url), outcome.noServer);
              break;
            }
            if (lane.downAtShutdown) break;
            await this.backoff(lane, SHUTDOWN_RETRY_MS);
          } else {
            await this.backoff(lane, outcome.afterMs);
          }
          continue;
        }
        lane.current = undefined;
        if (outcome.kind === 'sent') {
          this.stats.sent++;
          if (lane.failures > 0) {
            // Recovered: the next outage (and the next overflow it causes) is reported again.
            log.clear(`queue-full:${lane.kind}`);
            if (log.clear(`upload:${lane.kind}`)) log.info(`${lane.kind} uploads to ${endpointOf(request.url)} work again`);
          }
          lane.failures = 0;
        } else {
          this.stats.dropped++;
          log.warnOnce(`rejected:${lane.kind}:${outcome.status}`, `${lane.kind} upload rejected (${outcome.detail}); dropping ${request.what}`);
        }
      }
    } finally {
      lane.running = false;
      if (!this.anyRunning()) for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }

  /** One attempt at a request, in the form its pipeline sends; a refused request's fallback is tried at once. */
  private async send(lane: Lane, request: Outgoing): Promise<Outcome> {
    const outcome = await this.attempt(lane, formFor(lane, request));
    const fallback = request.fallback;
    if (outcome.kind !== 'rejected' || outcome.status !== 400 || !fallback || lane.fallbackAdopted || this.closed) return outcome;
    const second = await this.attempt(lane, fallback.request);
    if (second.kind === 'sent') {
      lane.fallbackAdopted = true;
      this.options.log.warn(fallback.note);
    }
    return second.kind === 'rejected' ? outcome : second;
  }

  private async attempt(lane: Lane, request: Outgoing): Promise<Outcome> {
    const { log } = this.options;
    const timeoutMs = request.timeoutMs ?? this.options.timeoutMs;
    // Through a proxy, the warnings say so: whether it or the backend failed is for the reader to tell.
    const endpoint = routeOf(request.url, this.transport.proxy);
    const abort = new AbortController();
    lane.abort = abort;
    // One timer for the whole attempt, whatever stage it is in: a server that takes the request, or
    // answers, at a trickle is cut off by it as surely as one that never answers.
    const timer = setTimeout(() => abort.abort(new Error(`no complete answer within ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
    try {
      const response = await loadUndici().post(this.getDispatcher(), request, abort.signal);
      if (response.statusCode >= 200 && response.statusCode < 300) {
        releaseReply(response.body);
        return { kind: 'sent' };
      }
      // An error body is read for the message, never unbounded, never for longer than the attempt.
      const text = replyExcerpt(await readAtMost(response.body, MAX_REPLY_BYTES));
      const detail = `${endpoint} answered ${response.statusCode}${text ? `: ${text}` : ''}`;
      if (isRetryableStatus(response.statusCode)) {
        log.warnOnce(`upload:${lane.kind}`, `${lane.kind} upload failed (${detail}); retrying, the app is not affected`);
        return { kind: 'retry', afterMs: retryAfterMs(response.headers['retry-after'], Date.now(), this.maxBackoff()) };
      }
      return { kind: 'rejected', status: response.statusCode, detail };
    } catch (error) {
      if (this.closed) return { kind: 'retry', afterMs: 0 };
      const why = abort.signal.aborted && abort.signal.reason instanceof Error ? abort.signal.reason.message : reason(error);
      // At exit this ends the pipeline's flush, and the final flush says what was not delivered.
      if (this.shuttingDown && isNoServer(error)) return { kind: 'retry', afterMs: undefined, noServer: why };
      log.warnOnce(`upload:${lane.kind}`, `${lane.kind} upload to ${endpoint} failed: ${why}${certificateHint(error)}; retrying, the app is not affected`);
      return { kind: 'retry', afterMs: undefined };
    } finally {
      clearTimeout(timer);
      lane.abort = undefined;
    }
  }

  /**
   * Loads the HTTP client (the uploads' warm-up, uploads.ts) instead of at the first upload, then
   * runs its request path once on the loopback interface (loopback-warm-up.ts), as our own
   * traffic; a failure there is left for the first real upload to meet.
   */
  prepare(): void {
    const undici = loadUndici();
    this.getDispatcher();
    otelApi()
      .context.with(ownTrafficContext(), () => warmUpOnLoopback(undici, this.transport))
      .catch(() => undefined);
  }

  private getDispatcher(): Dispatcher {
    this.dispatcher ??= createAgent(loadUndici(), this.transport, { unrefSockets: true });
    return this.dispatcher;
  }

  private maxBackoff(): number {
    return this.options.maxBackoffMs ?? 30_000;
  }

  private backoff(lane: Lane, requestedMs: number | undefined): Promise<void> {
    const base = this.options.baseBackoffMs ?? 500;
    const exponential = Math.min(base * 2 ** Math.min(lane.failures - 1, 16), this.maxBackoff());
    const delay = requestedMs ?? exponential * (0.75 + randomFraction() * 0.5);
    return new Promise<void>((resolve) => {
      lane.wakeBackoff = () => {
        if (lane.backoffTimer) clearTimeout(lane.backoffTimer);
        lane.backoffTimer = undefined;
        lane.wakeBackoff = undefined;
        resolve();
      };
      lane.backoffTimer = setTimeout(lane.wakeBackoff, delay);
      lane.backoffTimer.unref();
    });
  }
}

/** Whether a connection failure means no server is there (NO_SERVER), in the error or what caused it. */
function isNoServer(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== undefined && NO_SERVER.has(code)) return true;
    // Node's connect with autoSelectFamily: one error per address tried.
    if (e instanceof AggregateError && e.errors.length > 0 && e.errors.every(isNoServer)) return true;
  }
  return false;
}

/** A request as its pipeline sends it: its fallback form once the server showed it takes only that. */
function formFor(lane: Lane, request: Outgoing): Outgoing {
  return lane.fallbackAdopted && request.fallback ? request.fallback.request : request;
}

/** OpenSSL's verification failures (node:tls error codes) and Node's host-name mismatch. */
const CERTIFICATE_ERRORS = /^(UNABLE_TO_|SELF_SIGNED_CERT|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_|ERR_TLS_CERT_ALTNAME_INVALID|HOSTNAME_MISMATCH)/;

/** What to do about a certificate the runtime does not trust. */
function certificateHint(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string' || !CERTIFICATE_ERRORS.test(code)) return '';
  return ' (the TLS certificate is not trusted: add its CA with NODE_EXTRA_CA_CERTS=<ca.pem>, or, knowing the risk, --insecure-skip-tls-verify)';
}

/** Up to `max` bytes of a body; the rest is not read (the connection is closed instead). A body that breaks off gives what came. */
async function readAtMost(body: AsyncIterable<Uint8Array> & { destroy(): unknown }, max: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(Buffer.from(chunk));
      size += chunk.length;
      if (size >= max) break;
    }
  } catch {
    // Broken off or timed out: the status says enough.
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, max);
}
