import { createRequire } from 'node:module';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { Logger } from '../../log.js';
import type { FinalData } from '../destination.js';
import type { Outgoing } from '../transport/outgoing.js';
import type { Send, Upstream } from '../upstream.js';
import { countText } from './otlp-request.js';
import { OtlpSignalSender, type SignalEncoding, type SignalEndpoint } from './otlp-signal-upstream.js';

const require = createRequire(import.meta.url);

const LOGS_ENCODING: SignalEncoding<ReadableLogRecord> = {
  kind: 'logs',
  noun: 'log batch',
  serializer(json) {
    const transformer = require('@opentelemetry/otlp-transformer') as typeof import('@opentelemetry/otlp-transformer');
    const serializer = json ? transformer.JsonLogsSerializer : transformer.ProtobufLogsSerializer;
    return (records) => serializer.serializeRequest(records);
  },
  what: (records) => countText(records.length, 'log record'),
};

/**
 * Log records to an OTLP/HTTP logs endpoint (otlp-signal-upstream.ts): what the SDK's batch
 * processor would lose at `process.exit()` — records still buffered, batches still compressing —
 * is sent by the final flush.
 */
export class OtlpLogsUpstream implements Upstream {
  private readonly sender: OtlpSignalSender<ReadableLogRecord>;

  constructor(logs: SignalEndpoint, send: Send, log: Logger) {
    this.sender = new OtlpSignalSender(logs, LOGS_ENCODING, send, log);
  }

  prepare(): void {
    this.sender.prepare();
  }

  logRecords(batch: ReadableLogRecord[]): void {
    this.sender.add(batch);
  }

  settle(): Promise<void> {
    return this.sender.settle();
  }

  owedSync(last: FinalData): Outgoing[] {
    return this.sender.owedSync(last.logBatches);
  }
}
