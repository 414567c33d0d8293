import { createRequire } from 'node:module';
import type { ContextManager } from '@opentelemetry/api';
import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import type { Config } from './config.js';
import { AsyncContextManager } from './context-manager.js';
import type { Destination } from './export/destination.js';
import { SpanBatcher } from './export/span-batcher.js';
import { installedFrom, loadInstrumentations, selectInstrumentations } from './instrumentations.js';
import { type Logger, reason } from './log.js';
import { startTraceSdk } from './trace-sdk.js';
import { otelSdkTrace } from './vendor.js';

const require = createRequire(import.meta.url);

export interface TracingOptions {
  config: Config;
  /** Where our span batches go (local recording or OTLP/HTTP). */
  destination: Destination;
  log: Logger;
  /** Our span-link processor, first in line so the attribute is set before exporters see the span. */
  linkProcessor: SpanProcessor | undefined;
  contextManager: ContextManager | undefined;
  /** Where the app resolves its packages from: only instrumentations for what is installed there are loaded. */
  appDirs: readonly string[];
}

export interface Tracing {
  sdk: { shutdown(): Promise<void> };
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
  const sdkTrace = otelSdkTrace();
  if (traces.exporter === 'console') return { processor: new sdkTrace.SimpleSpanProcessor({ exporter: new sdkTrace.ConsoleSpanExporter() }) };
  if (traces.protocol === 'grpc') {
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-grpc') as typeof import('@opentelemetry/exporter-trace-otlp-grpc');
    const exporter = new OTLPTraceExporter(traces.endpoint ? { url: traces.endpoint } : {});
    return { processor: new sdkTrace.BatchSpanProcessor({ exporter, ...traces.batch }) };
  }
  return 'ours';
}

/**
 * Starts tracing: standard OTEL_* env, the instrumentations the app can use, our processors.
 * The lean trace SDK by default; the full NodeSDK when metrics or logs are asked for, since only
 * it builds those pipelines from env.
 */
export function startTracing(options: TracingOptions): Tracing {
  const { config, log } = options;
  const selection = selectInstrumentations(process.env, installedFrom(options.appDirs, process.env), { metrics: config.metricsRequested });
  if (selection.unknown.length > 0) log.warn(`unknown instrumentations in OTEL_NODE_ENABLED/DISABLED_INSTRUMENTATIONS: ${selection.unknown.join(', ')}`);
  const instrumentations = loadInstrumentations(selection.names, (name, error) => log.warnOnce(`instrumentation:${name}`, `instrumentation ${name} unavailable: ${reason(error)}`));
  log.debug(`instrumentations: ${selection.names.join(', ')}`);
  const { batcher, processor } = exportProcessor(options);
  const spanProcessors = [options.linkProcessor, batcher, processor].filter((p): p is SpanProcessor => p !== undefined);
  const contextManager = options.contextManager ?? new AsyncContextManager();
  if (config.metricsRequested || config.logsRequested) {
    const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
    const sdk = new NodeSDK({
      serviceName: config.serviceName,
      // Only the signals asked for: a traces-only backend (Tempo) must not get requests it rejects.
      ...(config.metricsRequested ? {} : { metricReaders: [] }),
      ...(config.logsRequested ? {} : { logRecordProcessors: [] }),
      instrumentations,
      spanProcessors,
      contextManager,
    });
    sdk.start();
    return { sdk, batcher, processor };
  }
  const problems: string[] = [];
  const sdk = startTraceSdk({
    env: process.env,
    serviceName: config.serviceName,
    contextManager,
    spanProcessors,
    instrumentations,
    problems,
  });
  for (const problem of problems) log.warn(problem);
  return { sdk, batcher, processor };
}
