import type { ProfileType } from '../profiling/profile-types.js';
import type { BatchSettings } from '../util/batcher.js';
import type { OtlpProtocol } from './otlp-spec.js';
import type { ProxySettings } from './proxy.js';

/** The configuration's shape, and the values each of its choices may take. */

export type { ProfileType };
export type { OtlpProtocol };

export const SPAN_SCOPES = ['root', 'all'] as const;
export type SpanScope = (typeof SPAN_SCOPES)[number];
export const LOG_LEVELS = ['silent', 'error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
/** What the app does when the pyro-run CLI that started it is killed (see src/agent/lifeline.ts). */
export const ORPHANED_APP = ['stop', 'keep'] as const;
export type OrphanedApp = (typeof ORPHANED_APP)[number];
export const DB_STATEMENTS = ['sanitized', 'raw'] as const;
export type DbStatements = (typeof DB_STATEMENTS)[number];

/** `none` in an OTEL_*_EXPORTER list: no exporter (sdk-node). */
export const NO_EXPORTER = 'none';
/** A span exporter OTEL_TRACES_EXPORTER may list (`none`, alone, lists none of them). */
export const SPAN_EXPORTERS = ['otlp', 'console'] as const;
export type SpanExporterName = (typeof SPAN_EXPORTERS)[number];
/** A log record exporter OTEL_LOGS_EXPORTER may list, as the NodeSDK takes them (`none` lists none). */
export const LOG_EXPORTERS = ['otlp', 'console'] as const;
export type LogExporterName = (typeof LOG_EXPORTERS)[number];
/** A metric exporter OTEL_METRICS_EXPORTER may list, as the NodeSDK takes them (sdk-node getMetricReadersFromEnv). */
export const METRIC_EXPORTERS = ['otlp', 'prometheus', 'console'] as const;
export type MetricExporterName = (typeof METRIC_EXPORTERS)[number];
export const PROFILES_EXPORTERS = ['pyroscope', 'otlp'] as const;
export type ProfilesExporter = (typeof PROFILES_EXPORTERS)[number];
/** OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE (OTel exporter spec, "Additional Environment Variable Configuration"). */
export const METRIC_TEMPORALITIES = ['cumulative', 'delta', 'lowmemory'] as const;
export type MetricTemporality = (typeof METRIC_TEMPORALITIES)[number];

export type Env = Readonly<Record<string, string | undefined>>;

export interface Facts {
  /** `name` of the app's package.json, the last fallback for the service name. */
  packageName?: string | undefined;
}

export interface Problem {
  /** The env var at fault. */
  env: string;
  /** What is wrong, without the value when the setting is secret. */
  message: string;
  /** What is used instead, when not the setting's default. */
  instead?: string;
}

/** A file named by an env var: its path as given (relative to the working directory) and the var. */
export interface FileSetting {
  env: string;
  path: string;
}

/**
 * The TLS files an OTLP/HTTP endpoint is reached with, as the OTel exporters read them
 * (otlp-exporter-base, otlp-node-http-env-configuration): the CA that signs the server's
 * certificate, trusted next to Node's own, and a client certificate with its key for mutual TLS.
 * Paths only: the files are read at start, at the edge (export/transport/origin-tls.ts).
 */
export interface OtlpTlsFiles {
  ca?: FileSetting;
  cert?: FileSetting;
  key?: FileSetting;
}

/** Where and how one signal is sent over OTLP, from its OTEL_EXPORTER_OTLP_<SIGNAL>_* variables over the shared ones. */
export interface OtlpSignalExport {
  protocol: OtlpProtocol;
  /** OTLP/HTTP: the signal's endpoint verbatim, else OTEL_EXPORTER_OTLP_ENDPOINT + the signal path, else the default; undefined when the signal is not sent (a proxy that cannot be used). */
  endpoint: string | undefined;
  headers: Record<string, string>;
  tls: OtlpTlsFiles;
  gzip: boolean;
  timeoutMs: number;
}

/**
 * Whose code sends a signal out: pyro-run's sender (OTLP/HTTP and Pyroscope's /ingest, through the
 * uploads, whose final flush takes what is left at exit), or the OpenTelemetry SDK's own exporter,
 * which reads its OTEL_EXPORTER_OTLP_* variables itself (OTLP/gRPC, and the NodeSDK's metrics and
 * logs pipelines where pyro-run does not take them). A route without one is not sent over OTLP.
 * Decided once, by config/signal-routes.ts.
 */
export type Sender = 'pyro-run' | 'otel-sdk';

/** A signal pyro-run sends has an endpoint to send it to. */
type SentTo = { sender: 'pyro-run'; endpoint: string } | { sender?: Exclude<Sender, 'pyro-run'>; endpoint: string | undefined };

/** Spans' route: the exporters listed, the OTLP export, and who sends it (none: otlp is not listed, or local mode records the spans). */
export type TracesRoute = OtlpSignalExport & {
  /** Where spans go, each once, in the order given; empty: nowhere (`none`). */
  exporters: SpanExporterName[];
  sender?: Sender;
};

/** Profiles' route in remote mode: always pyro-run's sender, to Pyroscope's /ingest or over OTLP (none: not sent, or local mode). */
export type ProfilesRoute = Omit<OtlpSignalExport, 'protocol' | 'endpoint'> & { exporter: ProfilesExporter } & (
    | { sender: 'pyro-run'; endpoint: string }
    | { sender?: undefined; endpoint: string | undefined }
  );

/** The route of a signal the NodeSDK's pipelines produce (metrics, logs): its exporters, its OTLP export, and who sends that. */
export type SignalRoute<E extends string> = Omit<OtlpSignalExport, 'endpoint'> & SentTo & { exporters: E[] };

export interface Config {
  /** service.name of spans and the service name of profiles: one value for both (Grafana joins on it). */
  serviceName: string;
  pyroscope: {
    /** Base URL of Pyroscope; undefined = profiles are not uploaded. */
    serverAddress: string | undefined;
    authToken: string | undefined;
    basicAuthUser: string | undefined;
    basicAuthPassword: string | undefined;
    tenantId: string | undefined;
    headers: Record<string, string>;
    labels: Record<string, string>;
    uploadTimeoutMs: number;
    /** Where the heap profile taken at the heap limit waits for the next start to send it; undefined: the default, under the OS's temporary folder. */
    spoolDir: string | undefined;
  };
  /** Accept any TLS certificate from the Pyroscope and OTLP endpoints (an explicit opt-out; off by default). */
  tlsSkipVerify: boolean;
  /** Proxies for the uploads, from HTTP_PROXY, HTTPS_PROXY and NO_PROXY (config/proxy.ts); undefined = none set. */
  proxy: ProxySettings | undefined;
  profiles: ProfileType[];
  /** Worker threads get an agent of their own (profiled, their samples sent with the main thread's), and messages between threads carry their span. */
  workers: boolean;
  /** Nothing about instrumentations' internals on the app's stderr (to the debug log instead), and, in local mode, no notices or exit summary. */
  quiet: boolean;
  spanScope: SpanScope;
  /** Where recordings go when nothing is sent (local mode); undefined = send to the configured backends. */
  local: { dir: string; capBytes: number; totalCapBytes: number; quiet: boolean; forced: boolean } | undefined;
  /** Map profile frames through the app's source maps, where it has any. */
  sourceMaps: boolean;
  /**
   * Label samples with trace_id too. Off by default when sending: Pyroscope before 2.1 keeps only
   * span_id per sample and turns every other sample label into a series label (pkg/model/pprofsplit,
   * GroupSamplesWithoutLabels; trace_id joined span_id in grafana/pyroscope#5220, v2.1.0).
   */
  traceIdLabel: boolean;
  flushIntervalMs: number;
  samplingIntervalMicros: number;
  /** At most this many distinct span_name values per profile window, the overflow value included (span-link/span-name-cap.ts). */
  maxSpanNames: number;
  /** Stalls of the main thread's event loop at least this long are recorded and attributed (src/blocks/); 0: not watched. */
  blockThresholdMs: number;
  /** The heap profile's sampler, as the Pyroscope Node SDK names its settings. */
  heap: { intervalBytes: number; stackDepth: number };
  shutdownTimeoutMs: number;
  orphanedApp: OrphanedApp;
  /** Scripts whose processes get no agent (launchers.ts isSkipped; start() reads it before the rest). */
  skip: string[];
  logLevel: LogLevel;
  /** Spans: their route (the endpoint already resolved: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT verbatim, or OTEL_EXPORTER_OTLP_ENDPOINT + signal path), and how they are batched. */
  traces: TracesRoute & {
    /** The span export env vars that are set: when the app's own SDK exports its spans, pyro-run says they are its to use. */
    settingsGiven: string[];
    /** OTEL_BSP_* batching, as the SDK's BatchSpanProcessor reads it (and the first batches' size, util/batcher.ts). */
    batch: BatchSettings;
    /** SQL statements (db.statement, db.query.text) go out with their literals as `?` (tracing/db-statements.ts), or as recorded. */
    dbStatements: DbStatements;
  };
  /** OTEL_RESOURCE_ATTRIBUTES, parsed: what the resource of profiles sent over OTLP carries besides service.name. */
  resourceAttributes: Record<string, string>;
  /** How profiles are sent in remote mode: to Pyroscope's /ingest (pyroscope), or over OTLP (otlp). */
  profilesExport: ProfilesRoute;
  sdkDisabled: boolean;
  /** OTEL_METRICS_EXPORTER / OTEL_LOGS_EXPORTER set: the NodeSDK builds those pipelines, but for what pyro-run sends (`metrics.sender`, `logs.sender`). */
  metricsRequested: boolean;
  logsRequested: boolean;
  /** The metrics route OTEL_METRICS_EXPORTER and the OTLP variables ask for, and how the periodic reader collects. */
  metrics: SignalRoute<MetricExporterName> & {
    /** OTEL_METRIC_EXPORT_INTERVAL and OTEL_METRIC_EXPORT_TIMEOUT (the timeout at most the interval, as the NodeSDK clamps it). */
    intervalMs: number;
    collectTimeoutMs: number;
    /** OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE, as OpenTelemetry's OTLP metric exporters read it. */
    temporality: MetricTemporality;
    /** OTEL_EXPORTER_PROMETHEUS_HOST and _PORT, for the prometheus exporter (the exporter's own defaults when unset). */
    prometheus: { host?: string; port?: number };
  };
  /** The logs route OTEL_LOGS_EXPORTER and the OTLP variables ask for, and how log records are batched. */
  logs: SignalRoute<LogExporterName> & {
    /** OTEL_BLRP_* batching, as the SDK's BatchLogRecordProcessor reads it (and the first batches' size, util/batcher.ts). */
    batch: BatchSettings;
  };
}
