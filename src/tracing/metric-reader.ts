import { createRequire } from 'node:module';
import type { AggregationTemporality, InstrumentType, MetricData, MetricReader, ResourceMetrics, ScopeMetrics } from '@opentelemetry/sdk-metrics';
import type { MetricTemporality } from '../config/index.js';
import { otelCore } from '../vendor.js';

const require = createRequire(import.meta.url);

type SdkMetrics = typeof import('@opentelemetry/sdk-metrics');

/**
 * The aggregation temporality of an instrument under OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE,
 * as the OTel exporter spec tables it and OpenTelemetry's OTLP metric exporters choose it
 * (exporter-metrics-otlp-http OTLPMetricExporterBase): delta sends the monotonic sums, histograms
 * and gauges as deltas; lowmemory only what a synchronous instrument can hand over without a copy.
 */
export function temporalityOf(preference: MetricTemporality, instrument: `${InstrumentType}`): 'delta' | 'cumulative' {
  if (preference === 'delta') return instrument === 'UP_DOWN_COUNTER' || instrument === 'OBSERVABLE_UP_DOWN_COUNTER' ? 'cumulative' : 'delta';
  if (preference === 'lowmemory') return instrument === 'COUNTER' || instrument === 'HISTOGRAM' ? 'delta' : 'cumulative';
  return 'cumulative';
}

export interface PeriodicReaderOptions {
  temporality: MetricTemporality;
  /** OTEL_METRIC_EXPORT_INTERVAL: how often metrics are collected and handed over. */
  intervalMs: number;
  /** OTEL_METRIC_EXPORT_TIMEOUT: how long the observable instruments' callbacks may take. */
  collectTimeoutMs: number;
  onMetrics(metrics: ResourceMetrics): void;
  /** A collection failed: whole (nothing handed over), or in part (an observable instrument's callback; the rest is handed over). */
  onError(error: unknown, whole: boolean): void;
}

/** The reader the NodeSDK's meter provider collects into, with what the exit path needs of it. */
export interface PeriodicReader extends MetricReader {
  /** The metrics now, observable instruments' callbacks run (what the periodic collection hands over). */
  collectNow(): Promise<ResourceMetrics | undefined>;
  /**
   * The metrics now, collected synchronously for `process.exit()`: the synchronous instruments
   * as they stand, the observable ones as their callbacks last reported.
   */
  collectSync(): ResourceMetrics | undefined;
}

/**
 * What collectSync reads of sdk-metrics 3's internals (state/MetricCollector.ts,
 * state/MeterSharedState.ts): MetricReader.collect() is async only because it awaits the observable
 * instruments' callbacks, which an exit handler cannot; the storages' collect() it then calls is
 * synchronous. test/unit/metrics-export.test.ts fails when an upgrade moves these.
 */
interface CollectorInternals {
  _sharedState: {
    resource: ResourceMetrics['resource'];
    meterSharedStates: Map<
      unknown,
      {
        _instrumentationScope: ScopeMetrics['scope'];
        metricStorageRegistry: { getStorages(collector: unknown): { collect(collector: unknown, time: [number, number]): MetricData | undefined }[] };
      }
    >;
  };
}

/**
 * A periodic metric reader in the place of the SDK's PeriodicExportingMetricReader: it hands each
 * collection to our destination (OTLP/HTTP through our sender) rather than to an exporter, so that
 * at exit a last collection can be taken synchronously and sent by the final flush. The timer is
 * unref'd: it never keeps the app alive.
 */
export function periodicReader(options: PeriodicReaderOptions): PeriodicReader {
  const sdk = require('@opentelemetry/sdk-metrics') as SdkMetrics;
  const temporalities: Record<'delta' | 'cumulative', AggregationTemporality> = {
    delta: sdk.AggregationTemporality.DELTA,
    cumulative: sdk.AggregationTemporality.CUMULATIVE,
  };

  class Reader extends sdk.MetricReader implements PeriodicReader {
    private timer: NodeJS.Timeout | undefined;
    private producer: CollectorInternals | undefined;

    constructor() {
      super({ aggregationTemporalitySelector: (instrument) => temporalities[temporalityOf(options.temporality, instrument)] });
    }

    override setMetricProducer(producer: Parameters<MetricReader['setMetricProducer']>[0]): void {
      super.setMetricProducer(producer);
      this.producer = producer as unknown as CollectorInternals;
    }

    protected override onInitialized(): void {
      this.timer = setInterval(() => {
        this.collectNow().then(
          (metrics) => metrics && options.onMetrics(metrics),
          (error: unknown) => options.onError(error, true),
        );
      }, options.intervalMs);
      this.timer.unref();
    }

    async collectNow(): Promise<ResourceMetrics | undefined> {
      const { resourceMetrics, errors } = await this.collect({ timeoutMillis: options.collectTimeoutMs });
      if (errors.length > 0) options.onError(errors[0], false);
      return withData(resourceMetrics);
    }

    collectSync(): ResourceMetrics | undefined {
      const state = this.producer?._sharedState;
      if (!state) return undefined;
      // The collection time as sdk-metrics' own collector takes it.
      const time = otelCore().millisToHrTime(Date.now());
      const scopeMetrics: ScopeMetrics[] = [];
      for (const meter of state.meterSharedStates.values()) {
        const metrics = meter.metricStorageRegistry.getStorages(this.producer).flatMap((storage) => storage.collect(this.producer, time) ?? []);
        if (metrics.length > 0) scopeMetrics.push({ scope: meter._instrumentationScope, metrics });
      }
      return withData({ resource: state.resource, scopeMetrics });
    }

    protected override onForceFlush(): Promise<void> {
      return Promise.resolve();
    }

    /** The last collection is the agent's to take (collectNow or collectSync), before the meter provider shuts down. */
    protected override onShutdown(): Promise<void> {
      clearInterval(this.timer);
      return Promise.resolve();
    }
  }
  return new Reader();
}

/** A collection with at least one data point, else nothing to send. */
function withData(metrics: ResourceMetrics): ResourceMetrics | undefined {
  return metrics.scopeMetrics.some((scope) => scope.metrics.some((metric) => metric.dataPoints.length > 0)) ? metrics : undefined;
}
