import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Config } from '../../config.js';
import { type Logger, reason } from '../../log.js';
import type { FinalData } from '../destination.js';
import type { Outgoing } from '../transport/outgoing.js';
import type { Send, Upstream } from '../upstream.js';
import { InProgress } from '../../util/in-progress.js';
import { otlpRequestBuilder, type SpanRequests } from './otlp-request.js';

/**
 * Span batches to an OTLP/HTTP traces endpoint (protobuf or JSON): each batch encoded a slice of
 * the event loop at a time, then sent. Batches still encoding are remembered, so that at exit —
 * where no further turn comes — they are encoded synchronously instead of lost.
 */
export class OtlpTracesUpstream implements Upstream {
  private readonly toRequests: SpanRequests;
  private readonly inProgress = new InProgress<ReadableSpan[]>();

  constructor(
    traces: Config['traces'],
    private readonly send: Send,
    private readonly log: Logger,
  ) {
    this.toRequests = otlpRequestBuilder(traces);
  }

  prepare(): void {
    this.toRequests.prepare();
  }

  spans(batch: ReadableSpan[]): void {
    this.inProgress.add(
      batch,
      this.toRequests.sliced(batch),
      (requests) => requests.forEach(this.send),
      (error) => this.log.warnOnce('encode-spans', `could not encode a span batch: ${reason(error)}; dropping it`),
    );
  }

  settle(): Promise<void> {
    return this.inProgress.settle();
  }

  owedSync(last: FinalData): Outgoing[] {
    return [...this.inProgress.take(), ...last.spanBatches].flatMap((batch) => this.toRequests(batch));
  }
}
