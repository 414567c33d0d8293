import { createRequire } from 'node:module';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { Config } from '../../config.js';
import { type Logger, reason } from '../../log.js';
import { gzip, gzipSync } from '../../util/gzip.js';
import { InProgress } from '../../util/in-progress.js';
import type { FinalData } from '../destination.js';
import type { Outgoing } from '../transport/outgoing.js';
import type { Send, Upstream } from '../upstream.js';
import { countText, gzipped, JSON_CONTENT_TYPE, MAX_OTLP_REQUEST_BYTES, PROTOBUF_CONTENT_TYPE, requestsWithin, sizeText } from './otlp-request.js';

const require = createRequire(import.meta.url);

type Transformer = typeof import('@opentelemetry/otlp-transformer');
type Serialize = (records: ReadableLogRecord[]) => Uint8Array | undefined;

/** What the logs upstream needs of the config: an OTLP/HTTP endpoint to send to. */
export type LogsExport = Omit<Config['logs'], 'endpoint' | 'exporters'> & { endpoint: string };

/**
 * Log records to an OTLP/HTTP logs endpoint, in the OTLP exporters' own encoding (protobuf or
 * JSON, @opentelemetry/otlp-transformer's serializers, the same copy the NodeSDK's exporters use),
 * gzipped in the threadpool when asked, through the uploads' sender. What goes through it is what
 * the SDK's batch processor would lose at `process.exit()`: records still buffered, and batches
 * still compressing, are encoded synchronously at exit and sent by the final flush.
 */
export class OtlpLogsUpstream implements Upstream {
  private serialize: Serialize | undefined;
  private readonly inProgress = new InProgress<ReadableLogRecord[]>();
  /** A batch's requests, each within the OTLP request bound. */
  private readonly requests: (batch: ReadableLogRecord[]) => Outgoing[];

  constructor(
    private readonly logs: LogsExport,
    private readonly send: Send,
    private readonly log: Logger,
  ) {
    const { endpoint: url, timeoutMs } = logs;
    const headers = { ...logs.headers, 'content-type': logs.protocol === 'http/json' ? JSON_CONTENT_TYPE : PROTOBUF_CONTENT_TYPE };
    const request = (records: ReadableLogRecord[], body: Uint8Array): Outgoing => ({ kind: 'logs', url, headers, body, timeoutMs, what: `${countText(records.length, 'log record')} (${sizeText(body.length)})` });
    // The serializer is loaded at the first use (normally prepare()), not here.
    this.requests = requestsWithin((records: ReadableLogRecord[]) => this.serializer()(records), request, MAX_OTLP_REQUEST_BYTES).build;
  }

  prepare(): void {
    this.serializer();
  }

  logRecords(batch: ReadableLogRecord[]): void {
    try {
      const requests = this.requests(batch);
      if (!this.logs.gzip) {
        requests.forEach(this.send);
        return;
      }
      this.inProgress.add(
        batch,
        Promise.all(requests.map(async (request) => gzipped(request, await gzip(request.body)))),
        (sent) => sent.forEach(this.send),
        (error) => this.log.warnOnce('encode-logs', `could not compress a log batch: ${reason(error)}; dropping it`),
      );
    } catch (error) {
      this.log.warnOnce('encode-logs', `could not encode a log batch: ${reason(error)}; dropping it`);
    }
  }

  settle(): Promise<void> {
    return this.inProgress.settle();
  }

  owedSync(last: FinalData): Outgoing[] {
    const requests = [...this.inProgress.take(), ...last.logBatches].flatMap((batch) => this.requests(batch));
    return this.logs.gzip ? requests.map((request) => gzipped(request, gzipSync(request.body))) : requests;
  }

  private serializer(): Serialize {
    if (this.serialize) return this.serialize;
    const transformer = require('@opentelemetry/otlp-transformer') as Transformer;
    const serializer = this.logs.protocol === 'http/json' ? transformer.JsonLogsSerializer : transformer.ProtobufLogsSerializer;
    this.serialize = (records) => serializer.serializeRequest(records);
    return this.serialize;
  }
}

