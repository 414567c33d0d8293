import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Config } from '../../config.js';
import type { FinalData } from '../destination.js';
import type { Outgoing } from '../transport/outgoing.js';
import type { Send, Upstream } from '../upstream.js';
import { otlpRequestBuilder } from './otlp-request.js';

/** Span batches to an OTLP/HTTP traces endpoint (protobuf or JSON), encoded as they come. */
export class OtlpTracesUpstream implements Upstream {
  private readonly toRequests: ReturnType<typeof otlpRequestBuilder>;

  constructor(
    traces: Config['traces'],
    private readonly send: Send,
  ) {
    this.toRequests = otlpRequestBuilder(traces);
  }

  prepare(): void {
    this.toRequests.prepare();
  }

  spans(batch: ReadableSpan[]): void {
    for (const request of this.toRequests(batch)) this.send(request);
  }

  settle(): Promise<void> {
    return Promise.resolve();
  }

  owedSync(last: FinalData): Outgoing[] {
    return last.spanBatches.flatMap((batch) => this.toRequests(batch));
  }
}
