import { createRequire } from 'node:module';
import type { ContextManager, TextMapPropagator } from '@opentelemetry/api';
import type { ReadableSpan, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace';
import { AppOtel } from '../app-otel/attach.js';
import { registered } from '../app-otel/globals.js';
import { TracerSwitch } from '../app-otel/tracer-switch.js';
import type { Config } from '../config/index.js';
import { AsyncContextManager } from './context-manager.js';
import { registerEsmHook } from './esm-hook.js';
import type { Destination } from '../export/destination.js';
import { routerYieldsToExpress } from '../frameworks/express-router.js';
import { startFastifyRoutes } from '../frameworks/fastify.js';
import { RouteFromSpans } from '../frameworks/routes.js';
import { withSanitizedStatement } from './db-statements.js';
import { SpanBatcher, type SpanGate } from './span-batcher.js';
import { LogBatcher } from './log-batcher.js';
import { periodicReader, type PeriodicReader } from './metric-reader.js';
import { installedFrom, loadInstrumentations, selectInstrumentations } from './instrumentations.js';
import { type Logger, reason } from '../log.js';
import type { LinkContext } from '../span-link/linking.js';
import { diagFromEnv } from './otel-diag.js';
import { propagatorFromEnv, tracerProviderFromEnv } from './trace-sdk.js';
import { otelApi, otelCore, otelInstrumentation, otelSdkTrace } from '../vendor.js';

const require = createRequire(import.meta.url);

export interface TracingOptions {
  config: Config;
  /** Where our span batches go (local recording or OTLP/HTTP). */
  destination: Destination;
  log: Logger;
  /** Our span-link processor, first in line so the attribute is set before exporters see the span. */
  linkProcessor: SpanProcessor | undefined;
  /** Links the context manager in charge (ours, or the app's) to the sampler. */
  linkContext: LinkContext | undefined;
  /** Where the app resolves its packages from: only instrumentations for what is installed there are loaded. */
  appDirs: readonly string[];
  /**
   * The event-loop blocks' part of our span export (src/blocks/block-spans.ts): a gate that holds a
   * span while a block it may be charged with is attributed, and the view that adds the block's event.
   */
  blocks?: { gate: SpanGate; outgoing: (span: ReadableSpan) => ReadableSpan } | undefined;
}

export interface Tracing {
  /** What pyro-run runs of the SDK itself; undefined when the app's own SDK is in charge. */
  sdk: { shutdown(): Promise<void> } | undefined;
  /** Present when spans go to our destination: its buffered spans can be taken synchronously at exit. */
  batcher: SpanBatcher | undefined;
  /** The exporters we do not own (grpc, console), each behind its processor: flushed asynchronously. */
  processors: SpanProcessor[];
  /** Present when log records go to our destination: its buffered records can be taken synchronously at exit. */
  logBatcher: LogBatcher | undefined;
  /** Present when metrics go to our destination: a last collection can be taken synchronously at exit. */
  metricReader: PeriodicReader | undefined;
}

/**
 * The span pipelines the config asks for, after the link processor: in local mode, the recording;
 * otherwise one per exporter listed — the SDK's console exporter, and for otlp whichever sender the
 * traces route names: ours (the batcher, into our destination) or the SDK's OTLP/gRPC exporter.
 */
function exportProcessors(options: TracingOptions): { batcher?: SpanBatcher; processors: SpanProcessor[] } {
  const { config } = options;
  if (config.local !== undefined) return { batcher: spanBatcher(options), processors: [] };
  const { traces } = config;
  const sdkTrace = otelSdkTrace();
  const processors: SpanProcessor[] = [];
  let batcher: SpanBatcher | undefined;
  for (const name of traces.exporters) {
    if (name === 'console') processors.push(new sdkTrace.SimpleSpanProcessor({ exporter: new sdkTrace.ConsoleSpanExporter() }));
    else if (traces.sender === 'otel-sdk') processors.push(grpcProcessor(traces, outgoingView(options), options.log));
    else if (traces.sender === 'pyro-run') batcher = spanBatcher(options);
  }
  return { batcher, processors };
}

/** Spans in batches to our destination (local recording, or OTLP/HTTP through our sender). */
function spanBatcher(options: TracingOptions): SpanBatcher {
  const { config, destination, log } = options;
  const { traces } = config;
  let dropped = 0;
  const batcher = new SpanBatcher({
    ...traces.batch,
    outgoing: outgoingView(options),
    gate: options.blocks?.gate,
    onBatch: (spans) => destination.spans(spans),
    encoded: destination.spanEncoder?.(),
    onDrop: (span) => {
      dropped++;
      destination.spanDropped?.(span);
      log.warnOnce('spans-dropped', `span buffer is full (${traces.batch.maxQueueSize} spans); dropping spans. Dropped so far: ${dropped}`);
    },
    onError: (error) => log.warnOnce('spans-batch', `a span batch could not be exported (${reason(error)}); dropping it`),
  });
  return batcher;
}

/**
 * Each span as it leaves, where our code exports it: SQL literals as `?` (db-statements.ts) unless
 * raw statements are asked for, and the events of the event-loop blocks charged to it; undefined
 * when neither applies.
 */
function outgoingView({ config, blocks }: TracingOptions): ((span: ReadableSpan) => ReadableSpan) | undefined {
  const sanitize = config.traces.dbStatements === 'sanitized' ? withSanitizedStatement : undefined;
  const events = blocks?.outgoing;
  if (sanitize && events) return (span) => events(sanitize(span));
  return sanitize ?? events;
}

/**
 * OTLP/gRPC: the OpenTelemetry exporter, which reads its own OTEL_EXPORTER_OTLP_* settings. Its
 * batch processor holds no span for a block's attribution, but exports a span seconds after it
 * ended (OTEL_BSP_SCHEDULE_DELAY), by when its block is usually known.
 */
function grpcProcessor(traces: Config['traces'], outgoing: ((span: ReadableSpan) => ReadableSpan) | undefined, log: Logger): SpanProcessor {
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-grpc') as typeof import('@opentelemetry/exporter-trace-otlp-grpc');
  const exporter = new OTLPTraceExporter(traces.endpoint ? { url: traces.endpoint } : {});
  // The SDK's own batching: its OTEL_BSP_* settings, without our batcher's first-batch size.
  const { maxQueueSize, maxExportBatchSize, scheduledDelayMillis } = traces.batch;
  const told = failuresTold(exporter, `spans upload over OTLP/gRPC to ${traces.endpoint ?? 'the default endpoint'}`, log);
  const sent: SpanExporter = outgoing ? { ...told, export: (spans, done) => told.export(spans.map(outgoing), done) } : told;
  return new (otelSdkTrace().BatchSpanProcessor)({ exporter: sent, maxQueueSize, maxExportBatchSize, scheduledDelayMillis });
}

/**
 * An exporter of the SDK's whose failures are told as ours are, saying what was lost. The batch
 * processor would only hand a failure to the SDK's global error handler, a bare message (told as
 * a warning through otel-diag.ts); so a failure told here goes back to it as handled.
 */
function failuresTold(exporter: SpanExporter, what: string, log: Logger): SpanExporter {
  const { ExportResultCode } = otelCore();
  return {
    export: (spans, done) =>
      exporter.export(spans, (result) => {
        if (result.code === ExportResultCode.SUCCESS) return done(result);
        log.warnOnce(what, `${what} failed (${reason(result.error)}); dropping ${spans.length} spans`);
        done({ code: ExportResultCode.SUCCESS });
      }),
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

/**
 * Starts tracing, or attaches to the app's own. When the app's OpenTelemetry SDK registered before
 * pyro-run started, its provider, context manager and propagator are kept and linked
 * (app-otel/attach.ts), and pyro-run runs no instrumentations and no provider of its own. Otherwise
 * pyro-run's: standard OTEL_* env, the instrumentations the app can use, our processors behind the
 * TracerSwitch — and a watch for an SDK the app starts later, which then takes over.
 */
export function startTracing(options: TracingOptions): Tracing {
  const { config, destination, log } = options;
  const env = process.env;
  const api = otelApi();
  const problems: string[] = [];
  const registration = (ok: boolean, what: string) => {
    if (!ok) log.warn(`could not register pyro-run's ${what} with the OpenTelemetry API (another copy of the API set it up first); spans may go unlinked`);
  };
  const found = registered();
  // An SDK the app started before us keeps the diagnostics it set up, or chose not to.
  const releaseDiag = found.provider ? undefined : diagFromEnv(env, log, found.diagLogger, config.quiet);
  const recording = config.local !== undefined;
  // Routes known below the request's HTTP span name it, whoever's SDK runs (frameworks/).
  const routes = new RouteFromSpans();
  startFastifyRoutes(log);
  const { batcher, processors } = found.provider && !recording ? { processors: [] } : exportProcessors(options);
  const app = new AppOtel({
    processors: present([options.linkProcessor, routes, recording ? batcher : undefined]),
    linkContext: options.linkContext,
    renameService: (name) => destination.renameService(name),
    exportSettings: config.traces.settingsGiven,
    log,
  });
  app.adopt(found);

  let contextManager = found.contextManager;
  if (contextManager === undefined) {
    contextManager = new AsyncContextManager().enable();
    options.linkContext?.(contextManager);
    registration(api.context.setGlobalContextManager(contextManager), 'context manager');
  }
  let propagator: TextMapPropagator | undefined;
  if (found.propagator === undefined) {
    propagator = propagatorFromEnv(env, problems);
    if (propagator) registration(api.propagation.setGlobalPropagator(propagator), 'propagator');
  }
  if (found.provider) {
    for (const problem of problems) log.warn(problem);
    return { sdk: undefined, batcher: recording ? batcher : undefined, processors: [], logBatcher: undefined, metricReader: undefined };
  }

  // No entry script (`node -e`, `-p`, the REPL): nothing to import later, and the in-thread
  // loader breaks `--require` + `-e` (its load hook is handed the `module` builtin as a path).
  if (process.argv[1] !== undefined) registerEsmHook();
  // Metrics and logs from the NodeSDK, which builds those pipelines from env; first, so the
  // instrumentations find its meter provider registered, and so its modules load before the
  // instrumentations' require hook exists (below).
  const signals = config.metricsRequested || config.logsRequested ? startMetricsAndLogs(options) : undefined;
  // The first instrumentation constructed installs the require hook (require-in-the-middle), which
  // remembers every module required through it from then on, patched or not: a module our own code
  // loads before its instrumentation is registered (node:http under the gRPC exporter) would stay
  // unpatched for the app too. So everything of ours is loaded above, and the instrumentations of
  // the app's modules, pyro-run's client hooks (boot.ts) and the app-otel watch come after.
  const exported = { metrics: config.metricsRequested, logs: config.logsRequested };
  const selection = selectInstrumentations(env, installedFrom(options.appDirs, env), exported);
  if (selection.unknown.length > 0) log.warn(`unknown instrumentations in OTEL_NODE_ENABLED/DISABLED_INSTRUMENTATIONS: ${selection.unknown.join(', ')}`);
  const instrumentations = loadInstrumentations(selection.names, exported, (name, error) =>
    log.warnOnce(`instrumentation:${name}`, `instrumentation ${name} unavailable: ${reason(error)}`),
  );
  routerYieldsToExpress(instrumentations);
  log.debug(`instrumentations: ${selection.names.join(', ')}`);
  otelInstrumentation().registerInstrumentations({ instrumentations });

  const consumers = present([options.linkProcessor, batcher, ...processors]);
  // With nothing to take spans, none are recorded: the instrumentations' spans stay non-recording.
  const provider =
    consumers.length > 0 ? tracerProviderFromEnv({ env, serviceName: config.serviceName, spanProcessors: [...consumers, routes], problems }) : undefined;
  const tracers = provider && new TracerSwitch(provider);
  if (tracers) registration(api.trace.setGlobalTracerProvider(tracers), 'tracer provider');
  for (const problem of problems) log.warn(problem);
  app.watch({ tracers, contextManager, propagator, instrumentations, releaseDiag });
  return {
    sdk: { shutdown: () => Promise.all([provider?.shutdown(), signals?.shutdown()]).then(() => undefined) },
    batcher,
    processors,
    logBatcher: signals?.logBatcher,
    metricReader: signals?.metricReader,
  };
}

/**
 * The NodeSDK for metrics and logs only: spans, context and propagation are set up by startTracing.
 * Metrics and log records whose route names pyro-run's sender go to our destination, as spans do;
 * where it names the SDK's exporter (grpc, local mode), the NodeSDK builds those pipelines from env.
 */
function startMetricsAndLogs(options: TracingOptions): {
  shutdown(): Promise<void>;
  logBatcher: LogBatcher | undefined;
  metricReader: PeriodicReader | undefined;
} {
  const { config } = options;
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const logBatcher = config.logsRequested && config.logs.sender === 'pyro-run' ? logRecordBatcher(options) : undefined;
  const metricReader = config.metricsRequested && config.metrics.sender === 'pyro-run' ? metricsReader(options) : undefined;
  const sdk = new NodeSDK({
    serviceName: config.serviceName,
    // Only the signals asked for: a traces-only backend (Tempo) must not get requests it rejects.
    // The SDK builds a signal's pipeline from env only where its route names the SDK's exporter; a
    // signal whose otlp route was refused (a proxy pyro-run cannot use) gets the other exporters only.
    ...(!config.metricsRequested
      ? { metricReaders: [] }
      : config.metrics.sender === 'otel-sdk'
        ? {}
        : { metricReaders: present([metricReader, ...otherMetricReaders(config)]) }),
    ...(!config.logsRequested
      ? { logRecordProcessors: [] }
      : config.logs.sender === 'otel-sdk'
        ? {}
        : { logRecordProcessors: present([logBatcher, ...consoleLogProcessors(config)]) }),
    spanProcessors: [],
    instrumentations: [],
    // null skips the set-up (sdk-node utils.ts setupContextManager), though the type does not say so.
    contextManager: null as unknown as ContextManager,
    textMapPropagator: null,
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown(), logBatcher, metricReader };
}

/** Metrics collected every OTEL_METRIC_EXPORT_INTERVAL into our destination (OTLP/HTTP through our sender). */
function metricsReader(options: TracingOptions): PeriodicReader {
  const { config, destination, log } = options;
  const { temporality, intervalMs, collectTimeoutMs } = config.metrics;
  return periodicReader({
    temporality,
    intervalMs,
    collectTimeoutMs,
    onMetrics: (metrics) => destination.metrics(metrics),
    onError: (error, whole) =>
      whole
        ? log.warnOnce('metrics-collect', `metrics could not be collected (${reason(error)}); the next collection is tried as usual`)
        : log.warnOnce('metrics-callback', `an observable instrument's callback failed (${reason(error)}); the other metrics are sent`),
  });
}

/**
 * `prometheus` and `console` in OTEL_METRICS_EXPORTER beside `otlp`: the SDK's readers, as the
 * NodeSDK sets them up from env (sdk-node getMetricReadersFromEnv).
 */
function otherMetricReaders({ metrics }: Pick<Config, 'metrics'>): import('@opentelemetry/sdk-metrics').MetricReader[] {
  const readers: import('@opentelemetry/sdk-metrics').MetricReader[] = [];
  const { exporters, prometheus } = metrics;
  if (exporters.includes('console')) {
    const { ConsoleMetricExporter, PeriodicExportingMetricReader } = require('@opentelemetry/sdk-metrics') as typeof import('@opentelemetry/sdk-metrics');
    readers.push(new PeriodicExportingMetricReader({ exporter: new ConsoleMetricExporter() }));
  }
  if (exporters.includes('prometheus')) {
    const { PrometheusExporter } = require('@opentelemetry/exporter-prometheus') as typeof import('@opentelemetry/exporter-prometheus');
    readers.push(new PrometheusExporter(prometheus));
  }
  return readers;
}

/** Log records in batches to our destination (OTLP/HTTP through our sender). */
function logRecordBatcher(options: TracingOptions): LogBatcher {
  const { config, destination, log } = options;
  let dropped = 0;
  return new LogBatcher({
    ...config.logs.batch,
    onBatch: (records) => destination.logRecords(records),
    onDrop: () => {
      dropped++;
      log.warnOnce('logs-dropped', `log record buffer is full (${config.logs.batch.maxQueueSize} records); dropping log records. Dropped so far: ${dropped}`);
    },
    onError: (error) => log.warnOnce('logs-batch', `a log batch could not be exported (${reason(error)}); dropping it`),
  });
}

/** `console` in OTEL_LOGS_EXPORTER beside `otlp`: the SDK's console exporter, as the NodeSDK sets it up from env. */
function consoleLogProcessors({ logs }: Pick<Config, 'logs'>): import('@opentelemetry/sdk-logs').LogRecordProcessor[] {
  if (!logs.exporters.includes('console')) return [];
  const { ConsoleLogRecordExporter, SimpleLogRecordProcessor } = require('@opentelemetry/sdk-logs') as typeof import('@opentelemetry/sdk-logs');
  return [new SimpleLogRecordProcessor({ exporter: new ConsoleLogRecordExporter() })];
}

const present = <T>(items: (T | undefined)[]): T[] => items.filter((item): item is T => item !== undefined);
