import type { LogRecordProcessor, ReadableLogRecord, ReadWriteLogRecord } from '@opentelemetry/sdk-logs';
import { Batcher, type BatcherOptions } from '../util/batcher.js';

/**
 * Emitted log records in OTEL_BLRP_* batches to our destination (util/batcher.ts), in the place of
 * the SDK's BatchLogRecordProcessor: at exit, what is still buffered can be taken synchronously.
 */
export class LogBatcher implements LogRecordProcessor {
  private readonly batcher: Batcher<ReadableLogRecord>;

  constructor(options: BatcherOptions<ReadableLogRecord>) {
    this.batcher = new Batcher(options);
  }

  onEmit(record: ReadWriteLogRecord): void {
    this.batcher.add(record);
  }

  /** Empties the buffer into batches, without sending them. */
  takeBuffered(): ReadableLogRecord[][] {
    return this.batcher.takeBuffered();
  }

  forceFlush(): Promise<void> {
    this.batcher.flush();
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    this.batcher.flush();
    return Promise.resolve();
  }
}
