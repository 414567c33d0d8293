import { createRequire } from 'node:module';
import type { MetricData, ResourceMetrics, ScopeMetrics } from '@opentelemetry/sdk-metrics';
import type { Logger } from '../../log.js';
import type { FinalData } from '../destination.js';
import type { Outgoing } from '../transport/outgoing.js';
import type { Send, Upstream } from '../upstream.js';
import { countText } from './otlp-request.js';
import { OtlpSignalSender, type SignalEncoding, type SignalEndpoint } from './otlp-signal-upstream.js';

const require = createRequire(import.meta.url);

/**
 * One metric of a collection with what it is reported under: the unit a collection is split by
 * when its request would pass the OTLP request bound (a high-cardinality app's).
 */
interface MetricItem {
  resource: ResourceMetrics['resource'];
  scope: ScopeMetrics['scope'];
  metric: MetricData;
}

const metricItems = (collection: ResourceMetrics): MetricItem[] =>
  collection.scopeMetrics.flatMap(({ scope, metrics }) => metrics.map((metric) => ({ resource: collection.resource, scope, metric })));

/** Items of one collection back into its shape: one resource, each scope once with its metrics in order. */
function collectionOf(items: MetricItem[]): ResourceMetrics {
  const byScope = new Map<ScopeMetrics['scope'], MetricData[]>();
  for (const { scope, metric } of items) {
    const metrics = byScope.get(scope);
    if (metrics) metrics.push(metric);
    else byScope.set(scope, [metric]);
  }
  return { resource: items[0]!.resource, scopeMetrics: [...byScope].map(([scope, metrics]) => ({ scope, metrics })) };
}

const METRICS_ENCODING: SignalEncoding<MetricItem> = {
  kind: 'metrics',
  noun: 'metrics collection',
  serializer(json) {
    const transformer = require('@opentelemetry/otlp-transformer') as typeof import('@opentelemetry/otlp-transformer');
    const serializer = json ? transformer.JsonMetricsSerializer : transformer.ProtobufMetricsSerializer;
    return (items) => (items.length === 0 ? undefined : serializer.serializeRequest(collectionOf(items)));
  },
  what: (items) => countText(items.length, 'metric'),
};

/**
 * Metric collections to an OTLP/HTTP metrics endpoint (otlp-signal-upstream.ts), the periodic
 * reader's (tracing/metric-reader.ts) and, at `process.exit()`, the last one taken synchronously,
 * which the NodeSDK's periodic reader could not send.
 */
export class OtlpMetricsUpstream implements Upstream {
  private readonly sender: OtlpSignalSender<MetricItem>;

  constructor(metrics: SignalEndpoint, send: Send, log: Logger) {
    this.sender = new OtlpSignalSender(metrics, METRICS_ENCODING, send, log);
  }

  prepare(): void {
    this.sender.prepare();
  }

  metrics(collection: ResourceMetrics): void {
    this.sender.add(metricItems(collection));
  }

  settle(): Promise<void> {
    return this.sender.settle();
  }

  owedSync(last: FinalData): Outgoing[] {
    return this.sender.owedSync(last.metrics ? [metricItems(last.metrics)] : []);
  }
}
