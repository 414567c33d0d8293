import { type BatchSettings, firstFullBatch } from '../util/batcher.js';
import { integer, oneOf } from './parse.js';
import { ENV, readVar } from './env-vars.js';
import { type Config, type Env, METRIC_TEMPORALITIES, type Problem } from './types.js';

/**
 * How the pipelines batch and collect, whoever sends what they produce: OTEL_BSP_* and OTEL_BLRP_*
 * as the SDK's batch processors read them, OTEL_METRIC_EXPORT_* as the NodeSDK's periodic reader
 * does, with the SDK's defaults.
 */

/** The batch variables of one pipeline, what they count, and the SDK's scheduled delay. */
const BATCHES = {
  spans: { queue: ENV.bspMaxQueueSize, size: ENV.bspMaxExportBatchSize, delay: ENV.bspScheduleDelay, unit: 'spans', delayMs: 5000 },
  logs: { queue: ENV.blrpMaxQueueSize, size: ENV.blrpMaxExportBatchSize, delay: ENV.blrpScheduleDelay, unit: 'log records', delayMs: 1000 },
} as const;

/** A pipeline's batching; the first batches' size follows the batch size only where it is set (util/batcher.ts). */
export function readBatch(env: Env, pipeline: keyof typeof BATCHES, problems: Problem[]): BatchSettings {
  const vars = BATCHES[pipeline];
  const count = integer(1, 1_000_000, vars.unit);
  const batchSize = readVar(env, vars.size, count, problems);
  return {
    maxQueueSize: readVar(env, vars.queue, count, problems) ?? 2048,
    maxExportBatchSize: batchSize ?? 512,
    scheduledDelayMillis: readVar(env, vars.delay, integer(0, 3_600_000, 'milliseconds'), problems) ?? vars.delayMs,
    firstFullBatch: firstFullBatch(batchSize),
  };
}

/**
 * The periodic reader's interval and timeout with the NodeSDK's defaults (60 s, 30 s; the timeout
 * clamped to the interval, as it does), the OTLP metric exporters' temporality preference (default
 * cumulative), and where the prometheus exporter listens.
 */
export function readMetricsCollection(
  env: Env,
  problems: Problem[],
): Pick<Config['metrics'], 'intervalMs' | 'collectTimeoutMs' | 'temporality' | 'prometheus'> {
  const millis = integer(1, 86_400_000, 'milliseconds');
  const intervalMs = readVar(env, ENV.metricExportInterval, millis, problems) ?? 60_000;
  return {
    intervalMs,
    collectTimeoutMs: Math.min(intervalMs, readVar(env, ENV.metricExportTimeout, millis, problems) ?? 30_000),
    temporality: readVar(env, ENV.otlpMetricsTemporality, oneOf(METRIC_TEMPORALITIES), problems) ?? 'cumulative',
    prometheus: definedOnly({
      host: env[ENV.prometheusHost]?.trim() || undefined,
      port: readVar(env, ENV.prometheusPort, integer(0, 65_535, 'port'), problems),
    }),
  };
}

/** The entries that are set: an exporter's options object, where an undefined entry would override its default. */
const definedOnly = <T extends object>(options: T): Partial<T> =>
  Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<T>;
