import type { Parsed } from './parse.js';
import { type Setting, type SettingKey, SETTINGS, type ValueOf } from './settings.js';
import type { Env, Problem } from './types.js';

/** Env vars read outside the table (no flag of their own). */
export const ENV = {
  applicationName: 'PYROSCOPE_APPLICATION_NAME',
  resourceAttributes: 'OTEL_RESOURCE_ATTRIBUTES',
  otlpTracesProtocol: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  otlpTracesHeaders: 'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  otlpProfilesHeaders: 'OTEL_EXPORTER_OTLP_PROFILES_HEADERS',
  otlpCompression: 'OTEL_EXPORTER_OTLP_COMPRESSION',
  otlpProfilesCompression: 'OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION',
  otlpTracesCompression: 'OTEL_EXPORTER_OTLP_TRACES_COMPRESSION',
  otlpTimeout: 'OTEL_EXPORTER_OTLP_TIMEOUT',
  otlpTracesTimeout: 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT',
  otlpProfilesTimeout: 'OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT',
  otlpLogsEndpoint: 'OTEL_EXPORTER_OTLP_LOGS_ENDPOINT',
  otlpLogsProtocol: 'OTEL_EXPORTER_OTLP_LOGS_PROTOCOL',
  otlpLogsHeaders: 'OTEL_EXPORTER_OTLP_LOGS_HEADERS',
  otlpLogsCompression: 'OTEL_EXPORTER_OTLP_LOGS_COMPRESSION',
  otlpLogsTimeout: 'OTEL_EXPORTER_OTLP_LOGS_TIMEOUT',
  otlpMetricsEndpoint: 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
  otlpMetricsProtocol: 'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL',
  otlpMetricsHeaders: 'OTEL_EXPORTER_OTLP_METRICS_HEADERS',
  otlpMetricsCompression: 'OTEL_EXPORTER_OTLP_METRICS_COMPRESSION',
  otlpMetricsTimeout: 'OTEL_EXPORTER_OTLP_METRICS_TIMEOUT',
  otlpMetricsTemporality: 'OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE',
  metricExportInterval: 'OTEL_METRIC_EXPORT_INTERVAL',
  metricExportTimeout: 'OTEL_METRIC_EXPORT_TIMEOUT',
  prometheusHost: 'OTEL_EXPORTER_PROMETHEUS_HOST',
  prometheusPort: 'OTEL_EXPORTER_PROMETHEUS_PORT',
  blrpMaxQueueSize: 'OTEL_BLRP_MAX_QUEUE_SIZE',
  blrpMaxExportBatchSize: 'OTEL_BLRP_MAX_EXPORT_BATCH_SIZE',
  blrpScheduleDelay: 'OTEL_BLRP_SCHEDULE_DELAY',
  sdkDisabled: 'OTEL_SDK_DISABLED',
  metricsExporter: 'OTEL_METRICS_EXPORTER',
  logsExporter: 'OTEL_LOGS_EXPORTER',
  bspMaxQueueSize: 'OTEL_BSP_MAX_QUEUE_SIZE',
  bspMaxExportBatchSize: 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
  bspScheduleDelay: 'OTEL_BSP_SCHEDULE_DELAY',
} as const;

/** Reads one env var; an unset or blank var is "not given", a bad one is a Problem. */
export function readVar<T>(env: Env, name: string, parse: (raw: string) => Parsed<T>, problems: Problem[]): T | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const parsed = parse(raw);
  if (parsed.ok) return parsed.value;
  problems.push({ env: name, message: `${name} ${parsed.message}` });
  return undefined;
}

/** Reads one setting of the table (readVar with its parser). */
export function readSetting<K extends SettingKey>(env: Env, key: K, problems: Problem[]): ValueOf<K> | undefined {
  const setting: Setting<ValueOf<K>> = SETTINGS[key] as unknown as Setting<ValueOf<K>>;
  return readVar(env, setting.env, setting.parse, problems);
}

/** Which env var a flag sets: the CLI's half of the table. */
export function settingByFlag(flag: string): [SettingKey, Setting] | undefined {
  for (const [key, setting] of Object.entries(SETTINGS) as [SettingKey, Setting][]) {
    if (setting.flag === flag) return [key, setting];
  }
  return undefined;
}

/** Names of env vars whose values must never be printed. */
export const SECRET_ENV: ReadonlySet<string> = new Set([
  ...Object.values(SETTINGS)
    .filter((s: Setting) => s.secret)
    .map((s) => s.env),
  ENV.otlpTracesHeaders,
  ENV.otlpProfilesHeaders,
  ENV.otlpLogsHeaders,
  ENV.otlpMetricsHeaders,
]);
