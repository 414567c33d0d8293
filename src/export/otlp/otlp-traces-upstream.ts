import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Config } from '../../config/index.js';
import { type Logger, reason } from '../../log.js';
import type { FinalData } from '../destination.js';
import type { Outgoing } from '../transport/outgoing.js';
import type { Send, Upstream } from '../upstream.js';
import { gzip, gzipSync } from '../../util/gzip.js';
import { InProgress } from '../../util/in-progress.js';
import { gzipped, otlpRequestBuilder, type SpanRequests } from './otlp-request.js';

/**
 * Span batches to an OTLP/HTTP traces endpoint (protobuf or JSON): each batch encoded a slice of
 * the event loop at a time, gzipped in the threadpool when OTEL_EXPORTER_OTLP_(TRACES_)COMPRESSION
 * asks, then sent. Batches still in progress are remembered, so that at exit — where no further
 * turn comes — they are encoded (and gzipped) synchronously instead of lost.
 */
export class OtlpTracesUpstream implements Upstream {
  private readonly toRequests: SpanRequests;
  private readonly inProgress = new InProgress<ReadableSpan[]>();
  private readonly gzip: boolean;

  constructor(
    traces: Config['traces'],
    private readonly send: Send,
    private readonly log: Logger,
  ) {
    this.toRequests = otlpRequestBuilder(traces);
    this.gzip = traces.gzip;
  }

  prepare(): void {
    this.toRequests.prepare();
  }

  spans(batch: ReadableSpan[]): void {
    const encoded = this.toRequests.sliced(batch);
    this.inProgress.add(
      batch,
      this.gzip ? encoded.then((requests) => Promise.all(requests.map(async (request) => gzipped(request, await gzip(request.body))))) : encoded,
      (requests) => requests.forEach(this.send),
      (error) => this.log.warnOnce('encode-spans', `could not encode a span batch: ${reason(error)}; dropping it`),
    );
  }

  settle(): Promise<void> {
    return this.inProgress.settle();
  }

  owedSync(last: FinalData): Outgoing[] {
    const requests = [...this.inProgress.take(), ...last.spanBatches].flatMap((batch) => this.toRequests(batch));
    return this.gzip ? requests.map((request) => gzipped(request, gzipSync(request.body))) : requests;
  }
}
