import { createRequire } from 'node:module';
import type { ContextManager } from '@opentelemetry/api';
import type { NodeSDK } from '@opentelemetry/sdk-node';
import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import type { Config } from './config.js';
import type { Destination } from './export/destination.js';
import { SpanBatcher } from './export/span-batcher.js';
import type { Logger } from './log.js';

const require = createRequire(import.meta.url);

export interface TracingOptions {
  config: Config;
  /** Where our span batches go (local recording or OTLP/HTTP). */
  destination: Destination;
  log: Logger;
  /** Our span-link processor, first in line so the attribute is set before exporters see the span. */
  linkProcessor: SpanProcessor | undefined;
  contextManager: ContextManager | undefined;
}

export interface Tracing {
  sdk: NodeSDK;
  /** Present when spans go to our destination: its buffered spans can be taken synchronously at exit. */
  batcher: SpanBatcher | undefined;
  /** Present for exporters we do not own (grpc, console): flushed asynchronously. */
  processor: SpanProcessor | undefined;
}

/** The span pipeline the config asks for, after the link processor. */
function exportProcessor(options: TracingOptions): { batcher?: SpanBatcher; processor?: SpanProcessor } {
  const { config, destination, log } = options;
  const { traces } = config;
  if (config.local === undefined) {
    const other = foreignProcessor(traces);
    if (other !== 'ours') return other;
  }
  let dropped = 0;
  const batcher = new SpanBatcher({
    ...traces.batch,
    onBatch: (spans) => destination.spans(spans),
    onDrop: (count) => {
      dropped += count;
      log.warnOnce('spans-dropped', `span buffer is full (${traces.batch.maxQueueSize} spans); dropping spans. Dropped so far: ${dropped}`);
    },
  });
  return { batcher };
}

/** Exporters we do not own (console, grpc) or none at all; 'ours' for OTLP/HTTP. */
function foreignProcessor(traces: Config['traces']): { processor?: SpanProcessor } | 'ours' {
  if (traces.exporter === 'none') return {};
  const sdkTrace = require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
  if (traces.exporter === 'console') return { processor: new sdkTrace.SimpleSpanProcessor({ exporter: new sdkTrace.ConsoleSpanExporter() }) };
  if (traces.protocol === 'grpc') {
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-grpc') as typeof import('@opentelemetry/exporter-trace-otlp-grpc');
    const exporter = new OTLPTraceExporter(traces.endpoint ? { url: traces.endpoint } : {});
    return { processor: new sdkTrace.BatchSpanProcessor({ exporter, ...traces.batch }) };
  }
  return 'ours';
}

/** Starts the OTel NodeSDK: standard OTEL_* env, auto-instrumentations, our processors. */
export function startTracing(options: TracingOptions): Tracing {
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { getNodeAutoInstrumentations } = require('@opentelemetry/auto-instrumentations-node') as typeof import('@opentelemetry/auto-instrumentations-node');
  const { batcher, processor } = exportProcessor(options);
  const spanProcessors = [options.linkProcessor, batcher, processor].filter((p): p is SpanProcessor => p !== undefined);
  const sdk = new NodeSDK({
    serviceName: options.config.serviceName,
    // Traces and profiles are the product; metrics and logs go out only when explicitly asked for,
    // so a traces-only backend (Tempo) does not receive requests it rejects.
    ...(options.config.metricsRequested ? {} : { metricReaders: [] }),
    ...(options.config.logsRequested ? {} : { logRecordProcessors: [] }),
    instrumentations: [getNodeAutoInstrumentations()],
    spanProcessors,
    ...(options.contextManager ? { contextManager: options.contextManager } : {}),
  });
  sdk.start();
  return { sdk, batcher, processor };
}
