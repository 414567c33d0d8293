import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { ProfileWindow } from '../profiling/profiler.js';
import type { FinalData } from './destination.js';
import type { EncodedSpan } from './otlp/otlp-trace-encode.js';
import type { Outgoing } from './transport/outgoing.js';

/** Where an upstream puts each request it has encoded: the shared sender's queue. */
export type Send = (request: Outgoing) => void;

/**
 * One backend of the uploads (uploads.ts): it takes what it carries — profile windows, span
 * batches, log batches, metrics collections — encodes its own wire format and hands the requests
 * to `Send`. Steady-state calls never throw; encoding that takes time runs off the app's hot path.
 */
export interface Upstream {
  /** Loads what its encoding needs, before the app serves rather than in the middle of its traffic (uploads.ts). */
  prepare(): void;
  /** Sends what an earlier process kept for it as it died (at start). */
  sendKept?(): void;
  profiles?(window: ProfileWindow): void;
  spans?(batch: ReadableSpan[]): void;
  /** Whether it takes spans encoded (OTLP/protobuf): through `encodedSpans`, instead of `spans`. */
  readonly takesEncodedSpans?: boolean;
  encodedSpans?(batch: EncodedSpan[]): void;
  logRecords?(batch: ReadableLogRecord[]): void;
  metrics?(collection: ResourceMetrics): void;
  /** What it files under the service name from now on: the name the app's own OpenTelemetry SDK set. */
  renameService?(name: string): void;
  /** Resolves once everything handed over so far is encoded and sent on. */
  settle(): Promise<void>;
  /**
   * At exit, where no turn of the event loop is coming: what it still owes — work still encoding,
   * then `last` — encoded synchronously.
   */
  owedSync(last: FinalData): Outgoing[];
  /** The heap limit was hit: keeps `window` (the heap profile of that moment) synchronously for a later process to send. */
  outOfMemorySync?(window: ProfileWindow): void;
}
