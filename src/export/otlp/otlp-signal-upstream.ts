import { type Logger, reason } from '../../log.js';
import { gzip, gzipSync } from '../../util/gzip.js';
import { InProgress } from '../../util/in-progress.js';
import type { Outgoing } from '../transport/outgoing.js';
import type { Send } from '../upstream.js';
import type { OtlpSignalExport } from '../../config/index.js';
import { gzipped, JSON_CONTENT_TYPE, MAX_OTLP_REQUEST_BYTES, PROTOBUF_CONTENT_TYPE, requestsWithin, sizeText } from './otlp-request.js';

/** An OTLP signal pyro-run sends (traces, metrics, logs): its export settings, with the endpoint it goes to. */
export type SignalEndpoint = OtlpSignalExport & { endpoint: string };

/** One OTLP signal's batches as requests: how a batch of items is serialized and described. */
export interface SignalEncoding<T> {
  kind: Outgoing['kind'];
  /** For warnings: `log batch`, `metrics collection`. */
  noun: string;
  /** The OTLP exporters' own serializer for the signal's protocol, loaded at the first use. */
  serializer(json: boolean): (items: T[]) => Uint8Array | undefined;
  /** Short text for logs, e.g. `3 log records`. */
  what(items: T[]): string;
}

/**
 * What the OTLP/HTTP traces, metrics and logs upstreams share: a batch serialized by the OTLP
 * exporters' own serializer (@opentelemetry/otlp-transformer, protobuf or JSON; our encoder for
 * spans over protobuf), split within the OTLP request bound, gzipped in the threadpool when asked,
 * handed to the uploads' sender. What the SDK's own
 * pipelines would lose at `process.exit()` goes through here: batches still compressing, and the
 * exit path's last ones, are encoded synchronously and sent by the final flush.
 */
export class OtlpSignalSender<T> {
  private serialize: ((items: T[]) => Uint8Array | undefined) | undefined;
  private readonly inProgress = new InProgress<T[]>();
  /** A batch's requests, each within the OTLP request bound. */
  private readonly requests: (batch: T[]) => Outgoing[];

  constructor(
    private readonly signal: SignalEndpoint,
    private readonly encoding: SignalEncoding<T>,
    private readonly send: Send,
    private readonly log: Logger,
  ) {
    const { endpoint: url, timeoutMs, protocol } = signal;
    const headers = { ...signal.headers, 'content-type': protocol === 'http/json' ? JSON_CONTENT_TYPE : PROTOBUF_CONTENT_TYPE };
    const request = (items: T[], body: Uint8Array): Outgoing => ({
      kind: encoding.kind,
      url,
      headers,
      body,
      timeoutMs,
      what: `${encoding.what(items)} (${sizeText(body.length)})`,
    });
    // The serializer is loaded at the first use (normally prepare()), not here.
    this.requests = requestsWithin((items: T[]) => this.serializer()(items), request, MAX_OTLP_REQUEST_BYTES).build;
  }

  prepare(): void {
    this.serializer();
  }

  add(batch: T[]): void {
    try {
      const requests = this.requests(batch);
      if (!this.signal.gzip) {
        requests.forEach(this.send);
        return;
      }
      this.inProgress.add(
        batch,
        Promise.all(requests.map(async (request) => gzipped(request, await gzip(request.body)))),
        (sent) => sent.forEach(this.send),
        (error) => this.log.warnOnce(`encode-${this.encoding.kind}`, `could not compress a ${this.encoding.noun}: ${reason(error)}; dropping it`),
      );
    } catch (error) {
      this.log.warnOnce(`encode-${this.encoding.kind}`, `could not encode a ${this.encoding.noun}: ${reason(error)}; dropping it`);
    }
  }

  settle(): Promise<void> {
    return this.inProgress.settle();
  }

  /** What is still compressing, then `last`, encoded synchronously. */
  owedSync(last: T[][]): Outgoing[] {
    const requests = [...this.inProgress.take(), ...last].flatMap((batch) => this.requests(batch));
    return this.signal.gzip ? requests.map((request) => gzipped(request, gzipSync(request.body))) : requests;
  }

  private serializer(): (items: T[]) => Uint8Array | undefined {
    return (this.serialize ??= this.encoding.serializer(this.signal.protocol === 'http/json'));
  }
}
