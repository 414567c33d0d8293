import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Block } from '../blocks/block.js';
import type { ProfileWindow } from '../profiling/profiler.js';
import type { EncodedSpan } from './otlp/otlp-trace-encode.js';

/** What is still owed at the very end: the last profile window, the spans and log records not yet batched out, the last metrics collection. */
export interface FinalData {
  window: ProfileWindow | undefined;
  spanBatches: ReadableSpan[][];
  /** Batches of spans already encoded (a destination with a `spanEncoder`). */
  encodedSpanBatches?: EncodedSpan[][];
  logBatches: ReadableLogRecord[][];
  metrics: ResourceMetrics | undefined;
}

/** Spans encoded soon after they end, and the batches of them (Destination.spanEncoder). */
export interface SpanEncoder {
  encode(spans: readonly ReadableSpan[]): EncodedSpan[];
  onBatch(batch: EncodedSpan[]): void;
}

/**
 * Where profile windows, span and log batches and metrics collections go: the backends (Pyroscope + OTLP) or a local
 * recording. Steady-state calls never throw and never block on I/O for long; the two finish
 * calls deliver everything owed within the deadline, asynchronously where the event loop still
 * turns and synchronously inside process 'exit'.
 */
export interface Destination {
  /** Loads what sending needs, when the app starts serving (the uploads' warm-up, uploads.ts; agent/first-listen.ts). Never throws. */
  prepare?(): void;
  /** Sends what earlier processes kept as they died, at start (uploads.ts). Never throws. */
  sendKept?(): void;
  profiles(window: ProfileWindow): void;
  /** Profiles from now on are filed under `name`: the service.name of the app's own OpenTelemetry SDK. */
  renameService(name: string): void;
  spans(batch: ReadableSpan[]): void;
  /**
   * Where spans are sent as OTLP/protobuf: how to encode them as they end, and where their batches
   * go (span-batcher.ts) — instead of `spans`. Undefined where span objects are wanted.
   */
  spanEncoder?(): SpanEncoder | undefined;
  /** A span the batch queue had no room for (OTEL_BSP_MAX_QUEUE_SIZE): not sent, but a local recording still counts its endpoint. */
  spanDropped?(span: ReadableSpan): void;
  /** Event-loop blocks of `thresholdMs` or longer are watched (a local recording says so, blocks or not). */
  blocksWatched?(thresholdMs: number): void;
  /** An event-loop block, as it is attributed (local mode records it; remote mode sends it as its span's event: src/blocks/block-spans.ts). */
  blocks?(block: Block): void;
  /** Log records over OTLP/HTTP (remote mode only: a local recording keeps none). */
  logRecords(batch: ReadableLogRecord[]): void;
  /** A metrics collection over OTLP/HTTP (remote mode only). */
  metrics(collection: ResourceMetrics): void;
  finishAsync(last: FinalData, deadlineAt: number): Promise<void>;
  finishSync(last: FinalData, deadlineAt: number): void;
  /**
   * The heap limit was hit: `window` holds the heap profile of that moment. Kept synchronously
   * (written, or spooled for the next start), since the process most likely dies right after.
   */
  outOfMemorySync(window: ProfileWindow): void;
}
