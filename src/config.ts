import { type ProxySettings, readProxies, unusableProxyFor } from './export/transport/proxy.js';
import { isProfileType, PROFILE_TYPE_NAMES, type ProfileType } from './profiling/profile-types.js';
import { type BatchSettings, firstFullBatch } from './util/batcher.js';
import { pm2AppName } from './util/pm2.js';
import { LABEL_SERVICE_NAME, LABEL_SPAN_ID, LABEL_SPAN_NAME, LABEL_THREAD_NAME, LABEL_TRACE_ID } from './wire.js';

/**
 * Configuration: one table that maps every CLI flag to the env var the preload reads, and one
 * pure parser `readConfig(env)` that both sides use. The CLI turns flags into env and rejects
 * problems (exit 2); the preload turns the same problems into one warning each and falls back
 * to the default, so the app always runs.
 */

export type { ProfileType };
export type SpanScope = 'root' | 'all';
export type LogLevel = 'silent' | 'error' | 'warn' | 'info' | 'debug';
/** A span exporter OTEL_TRACES_EXPORTER may list (`none`, alone, lists none of them). */
export type SpanExporterName = 'otlp' | 'console';
export type OtlpProtocol = 'http/protobuf' | 'http/json' | 'grpc';
export type ProfilesExporter = 'pyroscope' | 'otlp';
/** What the app does when the pyro-run CLI that started it is killed (see src/agent/lifeline.ts). */
export type OrphanedApp = 'stop' | 'keep';
export type DbStatements = 'sanitized' | 'raw';
const DB_STATEMENTS: readonly DbStatements[] = ['sanitized', 'raw'];

const SPAN_SCOPES: readonly SpanScope[] = ['root', 'all'];
const LOG_LEVELS: readonly LogLevel[] = ['silent', 'error', 'warn', 'info', 'debug'];
const SPAN_EXPORTERS: readonly SpanExporterName[] = ['otlp', 'console'];
const NO_EXPORTER = 'none';
const OTLP_PROTOCOLS: readonly OtlpProtocol[] = ['http/protobuf', 'http/json', 'grpc'];
const PROFILES_EXPORTERS: readonly ProfilesExporter[] = ['pyroscope', 'otlp'];
const OTLP_COMPRESSIONS = ['gzip', 'none'] as const;
/** The OTLP/HTTP base URL when none is given (OTel exporter spec). */
const OTLP_DEFAULT_BASE = 'http://localhost:4318';
/** The OTLP profiles signal's path (opentelemetry-proto profiles/v1development; Pyroscope serves it on its HTTP port). */
export const OTLP_PROFILES_PATH = '/v1development/profiles';
/** Where OTLP profiles go when no endpoint is given: the OTel default base URL, as for traces. */
export const DEFAULT_PROFILES_URL = `${OTLP_DEFAULT_BASE}${OTLP_PROFILES_PATH}`;
/** The OTLP/HTTP logs path (OTel exporter spec). */
export const OTLP_LOGS_PATH = '/v1/logs';
/** A log record exporter OTEL_LOGS_EXPORTER may list, as the NodeSDK takes them (`none` lists none). */
export type LogExporterName = 'otlp' | 'console';
const LOG_EXPORTERS: readonly LogExporterName[] = ['otlp', 'console'];
/** The OTLP/HTTP metrics path (OTel exporter spec). */
export const OTLP_METRICS_PATH = '/v1/metrics';
/** A metric exporter OTEL_METRICS_EXPORTER may list, as the NodeSDK takes them (sdk-node getMetricReadersFromEnv). */
export type MetricExporterName = 'otlp' | 'prometheus' | 'console';
const METRIC_EXPORTERS: readonly MetricExporterName[] = ['otlp', 'prometheus', 'console'];
/** OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE (OTel exporter spec, "Additional Environment Variable Configuration"). */
export type MetricTemporality = 'cumulative' | 'delta' | 'lowmemory';
const METRIC_TEMPORALITIES: readonly MetricTemporality[] = ['cumulative', 'delta', 'lowmemory'];
const ORPHANED_APP: readonly OrphanedApp[] = ['stop', 'keep'];

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
  /** Proxies for the uploads, from HTTP_PROXY, HTTPS_PROXY and NO_PROXY (export/proxy.ts); undefined = none set. */
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
  /** The heap profile's sampler, as the Pyroscope Node SDK names its settings. */
  heap: { intervalBytes: number; stackDepth: number };
  shutdownTimeoutMs: number;
  orphanedApp: OrphanedApp;
  /** Scripts whose processes get no agent (launchers.ts isSkipped; start() reads it before the rest). */
  skip: string[];
  logLevel: LogLevel;
  traces: {
    /** Where spans go, each once, in the order given; empty: nowhere (`none`). */
    exporters: SpanExporterName[];
    protocol: OtlpProtocol;
    /** Already resolved: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT verbatim, or OTEL_EXPORTER_OTLP_ENDPOINT + signal path. */
    endpoint: string | undefined;
    headers: Record<string, string>;
    /** The span export env vars that are set: when the app's own SDK exports its spans, pyro-run says they are its to use. */
    settingsGiven: string[];
    /** OTEL_BSP_* batching, as the SDK's BatchSpanProcessor reads it (and the first batches' size, util/batcher.ts). */
    batch: BatchSettings;
    /** OTEL_EXPORTER_OTLP_(TRACES_)CERTIFICATE, CLIENT_CERTIFICATE, CLIENT_KEY: files for the endpoint's TLS. */
    tls: OtlpTlsFiles;
    /** OTEL_EXPORTER_OTLP_(TRACES_)COMPRESSION=gzip: span batches sent gzipped (OTLP/HTTP only; the grpc exporter reads it itself). */
    gzip: boolean;
    /** How long one span upload may take: OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT, else the upload timeout. */
    timeoutMs: number;
    /** SQL statements (db.statement, db.query.text) go out with their literals as `?` (tracing/db-statements.ts), or as recorded. */
    dbStatements: DbStatements;
  };
  /** OTEL_RESOURCE_ATTRIBUTES, parsed: what the resource of profiles sent over OTLP carries besides service.name. */
  resourceAttributes: Record<string, string>;
  /** How profiles are sent in remote mode: to Pyroscope's /ingest (pyroscope), or over OTLP (otlp). */
  profilesExport: {
    exporter: ProfilesExporter;
    /**
     * OTLP: OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT verbatim, else OTEL_EXPORTER_OTLP_ENDPOINT + the
     * signal path, else the default; undefined when profiles are not sent (a proxy that cannot be used).
     */
    endpoint: string | undefined;
    headers: Record<string, string>;
    /** OTEL_EXPORTER_OTLP_(PROFILES_)COMPRESSION=gzip. */
    gzip: boolean;
    /** OTEL_EXPORTER_OTLP_(PROFILES_)CERTIFICATE, CLIENT_CERTIFICATE, CLIENT_KEY. */
    tls: OtlpTlsFiles;
    /** How long one profile upload over OTLP may take: OTEL_EXPORTER_OTLP_(PROFILES_)TIMEOUT, else the upload timeout. */
    timeoutMs: number;
  };
  sdkDisabled: boolean;
  /** OTEL_METRICS_EXPORTER / OTEL_LOGS_EXPORTER set: the NodeSDK builds those pipelines, but for what goes over OTLP/HTTP (`metrics`, `logs`). */
  metricsRequested: boolean;
  logsRequested: boolean;
  /** The metrics export OTEL_METRICS_EXPORTER and the OTLP variables ask for, by the OTel exporter spec's rules for the metrics signal. */
  metrics: OtlpSignalExport & {
    /** The exporters listed, each once; empty when metrics are not asked for (unset, or `none`). */
    exporters: MetricExporterName[];
    /** OTEL_METRIC_EXPORT_INTERVAL and OTEL_METRIC_EXPORT_TIMEOUT (the timeout at most the interval, as the NodeSDK clamps it). */
    intervalMs: number;
    collectTimeoutMs: number;
    /** OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE, as OpenTelemetry's OTLP metric exporters read it. */
    temporality: MetricTemporality;
    /** OTEL_EXPORTER_PROMETHEUS_HOST and _PORT, for the prometheus exporter (the exporter's own defaults when unset). */
    prometheus: { host?: string; port?: number };
  };
  /** The logs export OTEL_LOGS_EXPORTER and the OTLP variables ask for, by the OTel exporter spec's rules for the logs signal. */
  logs: OtlpSignalExport & {
    /** The exporters listed, each once; empty when logs are not asked for (unset, or `none`). */
    exporters: LogExporterName[];
    /** OTEL_BLRP_* batching, as the SDK's BatchLogRecordProcessor reads it (and the first batches' size, util/batcher.ts). */
    batch: BatchSettings;
  };
}

/** Where and how one OTLP signal (metrics, logs) is sent, from its OTEL_EXPORTER_OTLP_<SIGNAL>_* variables over the shared ones. */
export interface OtlpSignalExport {
  protocol: OtlpProtocol;
  /** OTLP/HTTP: the signal's endpoint verbatim, else OTEL_EXPORTER_OTLP_ENDPOINT + the signal path, else the default; undefined when the signal is not sent (a proxy that cannot be used). */
  endpoint: string | undefined;
  headers: Record<string, string>;
  tls: OtlpTlsFiles;
  gzip: boolean;
  timeoutMs: number;
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

export interface Problem {
  /** The env var at fault. */
  env: string;
  /** What is wrong, without the value when the setting is secret. */
  message: string;
  /** What is used instead, when not the setting's default. */
  instead?: string;
}

type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };
const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const bad = (message: string): Parsed<never> => ({ ok: false, message });

/** One row of the flag ↔ env table. `parse` gets the raw env string (never empty). */
export interface Setting<T = unknown> {
  /** Long flag without dashes, e.g. `server`. */
  flag: string;
  /** Value placeholder shown in --help, e.g. `<url>`; empty for a switch (`--quiet`), which sets the env var to `on`. */
  arg: string;
  env: string;
  description: string;
  /** Default as shown in --help; undefined = none. */
  defaultText?: string;
  secret?: boolean;
  parse: (raw: string) => Parsed<T>;
}

function integer(min: number, max: number, unit: string) {
  return (raw: string): Parsed<number> => {
    const text = raw.trim();
    if (!/^\d+$/.test(text)) return bad(`must be a whole number of ${unit}`);
    const value = Number(text);
    if (value < min || value > max) return bad(`must be between ${min} and ${max} ${unit}`);
    return ok(value);
  };
}

function positiveNumber(max: number, unit: string) {
  return (raw: string): Parsed<number> => {
    const text = raw.trim();
    if (!/^\d+(\.\d+)?$/.test(text) || Number(text) <= 0) return bad(`must be a positive number of ${unit}`);
    const value = Number(text);
    if (value > max) return bad(`must be at most ${max} ${unit}`);
    return ok(value);
  };
}

function oneOf<T extends string>(allowed: readonly T[]) {
  return (raw: string): Parsed<T> => {
    const value = raw.trim().toLowerCase() as T;
    return allowed.includes(value) ? ok(value) : bad(`must be one of ${allowed.join(', ')}`);
  };
}

function checkUrl(raw: string): Parsed<string> {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return bad('must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return bad('must be an http:// or https:// URL');
  return ok(url.toString());
}

/** A base URL: paths are appended to it, so trailing slashes go. */
export function parseUrl(raw: string): Parsed<string> {
  const checked = checkUrl(raw);
  return checked.ok ? ok(checked.value.replace(/\/+$/, '')) : checked;
}

/** A full URL that the OTel spec says to use as given (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). */
function parseExactUrl(raw: string): Parsed<string> {
  const checked = checkUrl(raw);
  return checked.ok ? ok(raw.trim()) : checked;
}

/**
 * Label keys pyro-run sends itself, which Grafana joins profiles to spans and services on: a static
 * label of the same name would stand in for them.
 */
const RESERVED_LABELS: ReadonlySet<string> = new Set([LABEL_SERVICE_NAME, LABEL_SPAN_ID, LABEL_SPAN_NAME, LABEL_TRACE_ID, LABEL_THREAD_NAME]);
/**
 * Pyroscope's default bounds on a series (pkg/validation limits.go): 30 label names, of which 6 are
 * sent with every profile (__name__, __delta__, service_name, pyroscope_spy, span_name,
 * thread_name), and names of at most 1024 bytes. A label past them would get every profile rejected.
 */
const MAX_STATIC_LABELS = 24;
const MAX_LABEL_NAME_BYTES = 1024;

/**
 * Each entry of `k=v,k2=v2` (the PYROSCOPE_LABELS form of the Java/.NET SDKs), as a label or as
 * what is wrong with it. Keys must survive the server's label-set parser (`[A-Za-z0-9_.]`, not
 * starting `__`); values are escaped at upload time.
 */
function labelEntries(raw: string): { labels: Record<string, string>; wrong: string[] } {
  const labels: Record<string, string> = {};
  const wrong: string[] = [];
  for (const part of raw.split(',')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    const key = eq > 0 ? part.slice(0, eq).trim() : '';
    const value = part.slice(eq + 1).trim();
    if (eq <= 0) wrong.push(`"${part.trim()}" is not key=value`);
    else if (!/^[A-Za-z_][A-Za-z0-9_.]*$/.test(key)) wrong.push(`label key "${key}" may only hold letters, digits, _ and . and must not start with a digit`);
    else if (key.startsWith('__')) wrong.push(`label key "${key}" starts with __, which Pyroscope reserves`);
    else if (RESERVED_LABELS.has(key)) wrong.push(`label key "${key}" is one pyro-run sends itself (Grafana joins profiles on it)`);
    else if (Buffer.byteLength(key) > MAX_LABEL_NAME_BYTES) wrong.push(`label key "${key.slice(0, 32)}…" is longer than Pyroscope's ${MAX_LABEL_NAME_BYTES} bytes`);
    else if (value === '') wrong.push(`label "${key}" has an empty value`);
    else if (Object.keys(labels).length >= MAX_STATIC_LABELS && !(key in labels)) wrong.push(`label "${key}" is past the ${MAX_STATIC_LABELS} static labels Pyroscope's series allow`);
    else labels[key] = value;
  }
  return { labels, wrong };
}

/**
 * Whether an OTEL_*_EXPORTER list asks for any exporter: empty and `none` ask for none, and `none`
 * anywhere in the list wins, as in sdk-node (utils.ts getMetricReadersFromEnv, the logs set-up).
 */
function exportersAskedFor(raw: string | undefined): boolean {
  const names = (raw ?? '').split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '');
  return names.length > 0 && !names.includes('none');
}

/** Static labels `k=v,k2=v2`: all must be right (the CLI rejects a list with a wrong one). */
export function parseLabels(raw: string): Parsed<Record<string, string>> {
  const { labels, wrong } = labelEntries(raw);
  return wrong.length === 0 ? ok(labels) : bad(wrong.join('; '));
}

/** PYROSCOPE_LABELS in the app: the right entries are kept, the wrong ones reported. */
function readLabels(env: Env, problems: Problem[]): Record<string, string> {
  const name = SETTINGS.labels.env;
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return {};
  const { labels, wrong } = labelEntries(raw);
  if (wrong.length > 0) problems.push({ env: name, message: `${name} ${wrong.join('; ')}`, instead: Object.keys(labels).length > 0 ? 'the other labels are used' : 'no static labels are sent' });
  return labels;
}

/**
 * Header lists in the OTEL_EXPORTER_OTLP_HEADERS form: `k=v,k2=v2`, values URL-encoded.
 * Messages never echo a value: headers carry credentials.
 */
export function parseHeaders(raw: string): Parsed<Record<string, string>> {
  const headers: Record<string, string> = {};
  for (const part of raw.split(',')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    const name = eq > 0 ? part.slice(0, eq).trim() : '';
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) return bad('each entry must be name=value with a valid header name');
    let value: string;
    try {
      value = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      return bad(`the value of header "${name}" is not valid URL encoding`);
    }
    headers[name.toLowerCase()] = value;
  }
  return ok(headers);
}

function parseProfiles(raw: string): Parsed<ProfileType[]> {
  const words = raw.split(',').map((w) => w.trim().toLowerCase()).filter((w) => w !== '');
  if (words.length === 1 && words[0] === 'none') return ok([]);
  const out: ProfileType[] = [];
  for (const word of words) {
    if (!isProfileType(word)) return bad(`unknown profile type "${word}" (known: ${PROFILE_TYPE_NAMES.join(', ')}, or none)`);
    if (!out.includes(word)) out.push(word);
  }
  if (out.length === 0) return bad(`must list profile types (${PROFILE_TYPE_NAMES.join(', ')}) or be none`);
  // V8 has one sampling heap profiler per isolate; its allocation mode restarts every window, which would empty the in-use profile.
  if (out.includes('heap') && out.includes('alloc')) return bad('heap and alloc cannot be on together (V8 has one heap sampler, and allocation profiles restart it every window); choose one');
  return ok(out);
}

/**
 * OTEL_TRACES_EXPORTER, a comma-separated list as sdk-node reads it (utils.ts
 * getSpanProcessorsFromEnv): each exporter once, `none` alone for no export. Unlike sdk-node, which
 * skips a name it does not know and turns `none` beside others into its default, either makes the
 * whole value wrong here, so that pyro-run's rule holds: a wrong value is one problem, and the
 * default stands in for it.
 */
function parseTracesExporters(raw: string): Parsed<SpanExporterName[]> {
  const names = [...new Set(raw.split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== ''))];
  if (names.length === 1 && names[0] === NO_EXPORTER) return ok([]);
  if (names.includes(NO_EXPORTER)) return bad(`lists ${NO_EXPORTER} with other exporters`);
  const unknown = names.find((name) => !(SPAN_EXPORTERS as readonly string[]).includes(name));
  if (unknown !== undefined) return bad(`names "${unknown}", which is not one of ${[...SPAN_EXPORTERS, NO_EXPORTER].join(', ')}`);
  if (names.length === 0) return bad(`must list exporters (${SPAN_EXPORTERS.join(', ')}) or be ${NO_EXPORTER}`);
  return ok(names as SpanExporterName[]);
}

function onOff(raw: string): Parsed<boolean> {
  const value = raw.trim().toLowerCase();
  if (['on', 'true', '1', 'yes'].includes(value)) return ok(true);
  if (['off', 'false', '0', 'no'].includes(value)) return ok(false);
  return bad('must be on or off');
}

/** A comma-separated list of package names and script paths (launchers.ts isSkipped says how each matches). */
export function parseSkipList(raw: string): Parsed<string[]> {
  const entries = raw.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  if (entries.length === 0) return bad('must name at least one package or script');
  const blank = entries.find((entry) => /\s/.test(entry));
  return blank === undefined ? ok(entries) : bad(`"${blank}" holds white space: package names and script paths are comma-separated`);
}

/** An upload's timeout, pyro-run's own or an OTLP exporter's. */
const uploadTimeoutMs = integer(100, 600_000, 'milliseconds');

const text = (raw: string): Parsed<string> => (raw.trim() === '' ? bad('must not be empty') : ok(raw.trim()));

/** The table. Order is the order of `--help`. */
export const SETTINGS = {
  serviceName: { flag: 'service-name', arg: '<name>', env: 'OTEL_SERVICE_NAME', description: "service.name of spans and profiles (else PYROSCOPE_APPLICATION_NAME, else the app's name in PM2, else package.json name)", parse: text },
  server: { flag: 'server', arg: '<url>', env: 'PYROSCOPE_SERVER_ADDRESS', description: 'Pyroscope base URL that receives profiles at /ingest', parse: parseUrl },
  authToken: { flag: 'auth-token', arg: '<token>', env: 'PYROSCOPE_AUTH_TOKEN', description: 'bearer token for Pyroscope', secret: true, parse: text },
  basicAuthUser: { flag: 'basic-auth-user', arg: '<user>', env: 'PYROSCOPE_BASIC_AUTH_USER', description: 'basic-auth user for Pyroscope (Grafana Cloud: the numeric user)', parse: text },
  basicAuthPassword: { flag: 'basic-auth-password', arg: '<password>', env: 'PYROSCOPE_BASIC_AUTH_PASSWORD', description: 'basic-auth password for Pyroscope (Grafana Cloud: an API token)', secret: true, parse: text },
  tenantId: { flag: 'tenant-id', arg: '<id>', env: 'PYROSCOPE_TENANT_ID', description: 'tenant sent as X-Scope-OrgID', parse: text },
  pyroscopeHeaders: { flag: 'pyroscope-headers', arg: '<k=v,...>', env: 'PYRO_RUN_PYROSCOPE_HEADERS', description: 'extra HTTP headers for Pyroscope uploads (values URL-encoded)', secret: true, parse: parseHeaders },
  labels: { flag: 'labels', arg: '<k=v,...>', env: 'PYROSCOPE_LABELS', description: 'static labels added to every profile', parse: parseLabels },
  profiles: { flag: 'profiles', arg: '<list>', env: 'PYRO_RUN_PROFILES', description: `profiles to collect: ${PROFILE_TYPE_NAMES.join(', ')}, or none`, defaultText: 'cpu,wall', parse: parseProfiles },
  workers: {
    flag: 'workers',
    arg: '<on|off>',
    env: 'PYRO_RUN_WORKERS',
    description: "profile worker threads too (a thread_name label on every sample), with the work a worker does for a message or a pool's task labelled with the span that sent it",
    defaultText: 'on',
    parse: onOff,
  },
  spanScope: { flag: 'span-scope', arg: '<scope>', env: 'PYRO_RUN_SPAN_SCOPE', description: 'root: samples carry the local-root span; all: each span its own', defaultText: 'root', parse: oneOf(SPAN_SCOPES) },
  out: { flag: 'out', arg: '<dir>', env: 'PYRO_RUN_OUTPUT_DIR', description: 'record into DIR (one subfolder per run) instead of sending; forces local mode', defaultText: './pyro-run-data when no backend is set', parse: text },
  maxRunSize: { flag: 'max-run-size', arg: '<MB>', env: 'PYRO_RUN_MAX_RUN_MB', description: 'local mode: disk cap per run; spans take half at most, older profile windows are merged to fit', defaultText: '200', parse: positiveNumber(1_000_000, 'megabytes') },
  maxTotalSize: { flag: 'max-total-size', arg: '<MB>', env: 'PYRO_RUN_MAX_TOTAL_MB', description: 'local mode: disk cap of all the runs in the output folder; the oldest finished runs go first, running ones are kept', defaultText: '1024', parse: positiveNumber(1_000_000, 'megabytes') },
  quiet: { flag: 'quiet', arg: '', env: 'PYRO_RUN_QUIET', description: "no warnings about the instrumentations' internals (they go to the debug log); local mode: no notices and no exit summary", defaultText: 'off', parse: onOff },
  sourceMaps: { flag: 'source-maps', arg: '<on|off>', env: 'PYRO_RUN_SOURCE_MAPS', description: "name the original (e.g. TypeScript) file and line in profiles, from the app's source maps", defaultText: 'on', parse: onOff },
  traceIdLabel: { flag: 'trace-id-label', arg: '<on|off>', env: 'PYRO_RUN_TRACE_ID_LABEL', description: 'also label samples with trace_id (Pyroscope 2.1+ keeps it per sample, as span_id; before 2.1 it becomes a series label: one series per trace)', defaultText: 'on in local mode, else off', parse: onOff },
  maxSpanNames: {
    flag: 'max-span-names',
    arg: '<n>',
    env: 'PYRO_RUN_MAX_SPAN_NAMES',
    description: 'distinct span_name label values per profile window (IDs in span names are folded into {id}, {uuid}, {hex}, {email} first); the spans past it are labelled "(other span names)"',
    defaultText: '100',
    parse: integer(2, 5000, 'span names'),
  },
  flushInterval: { flag: 'flush-interval', arg: '<ms>', env: 'PYROSCOPE_FLUSH_INTERVAL_MS', description: 'length of one profile window', defaultText: '15000', parse: integer(1000, 3_600_000, 'milliseconds') },
  samplingInterval: { flag: 'sampling-interval', arg: '<us>', env: 'PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS', description: 'time between profiler samples', defaultText: '10000', parse: integer(100, 1_000_000, 'microseconds') },
  heapSamplingInterval: { flag: 'heap-sampling-interval', arg: '<bytes>', env: 'PYROSCOPE_HEAP_SAMPLING_INTERVAL_BYTES', description: 'heap profile: mean bytes allocated between two samples', defaultText: '524288', parse: integer(1024, 1 << 30, 'bytes') },
  heapStackDepth: { flag: 'heap-stack-depth', arg: '<frames>', env: 'PYROSCOPE_HEAP_STACK_DEPTH', description: 'heap profile: deepest stack recorded per sample', defaultText: '64', parse: integer(1, 1024, 'frames') },
  spoolDir: { flag: 'spool-dir', arg: '<dir>', env: 'PYRO_RUN_SPOOL_DIR', description: 'remote mode: where the heap profile taken when the app hits its heap limit waits for the next start to send it (in a container: a volume)', defaultText: '<tmp>/pyro-run-spool', parse: text },
  uploadTimeout: {
    flag: 'upload-timeout',
    arg: '<ms>',
    env: 'PYRO_RUN_UPLOAD_TIMEOUT_MS',
    description: 'timeout of one upload request (a profile or a span batch); an OTLP upload takes OTEL_EXPORTER_OTLP_(TRACES_|PROFILES_)TIMEOUT where set',
    defaultText: '10000',
    parse: uploadTimeoutMs,
  },
  insecureSkipTlsVerify: {
    flag: 'insecure-skip-tls-verify',
    arg: '',
    env: 'PYRO_RUN_INSECURE_SKIP_TLS_VERIFY',
    description: 'do not verify the TLS certificates of the Pyroscope and OTLP endpoints. Risky: anyone on the network path can then impersonate them and read the profiles, spans and credentials; prefer NODE_EXTRA_CA_CERTS=<ca.pem>',
    defaultText: 'off',
    parse: onOff,
  },
  shutdownTimeout: { flag: 'shutdown-timeout', arg: '<ms>', env: 'PYRO_RUN_SHUTDOWN_TIMEOUT_MS', description: 'deadline for the final flush at exit', defaultText: '5000', parse: integer(0, 600_000, 'milliseconds') },
  orphanedApp: {
    flag: 'orphaned-app',
    arg: '<stop|keep>',
    env: 'PYRO_RUN_ORPHANED_APP',
    description: 'when the pyro-run CLI itself is killed (SIGKILL) while the app runs: stop the app as SIGTERM would, or keep it running (Linux; daemons started through pyro-run are never stopped)',
    defaultText: 'stop',
    parse: oneOf(ORPHANED_APP),
  },
  skip: {
    flag: 'skip',
    arg: '<scripts>',
    env: 'PYRO_RUN_SKIP',
    description:
      "no agent in the processes whose script is one of these, comma-separated: a package name (any script under node_modules/<name>/, e.g. a test runner's workers) or a script path (a file name, or its end: scripts/migrate.js)",
    parse: parseSkipList,
  },
  dbStatements: {
    flag: 'db-statements',
    arg: '<sanitized|raw>',
    env: 'PYRO_RUN_DB_STATEMENTS',
    description: "SQL statements on spans (db.statement, db.query.text): sanitized, their literals replaced by ? before they are sent or written (an ORM inlines users' values into its SQL); raw, as recorded",
    defaultText: 'sanitized',
    parse: oneOf(DB_STATEMENTS),
  },
  logLevel: { flag: 'log-level', arg: '<level>', env: 'PYRO_RUN_LOG_LEVEL', description: `pyro-run's own messages: ${LOG_LEVELS.join(', ')}`, defaultText: 'warn', parse: oneOf(LOG_LEVELS) },
  tracesExporter: {
    flag: 'traces-exporter',
    arg: '<list>',
    env: 'OTEL_TRACES_EXPORTER',
    description: `where spans go: ${SPAN_EXPORTERS.join(', ')} or both (comma-separated), or ${NO_EXPORTER}`,
    defaultText: 'otlp',
    parse: parseTracesExporters,
  },
  otlpEndpoint: { flag: 'otlp-endpoint', arg: '<url>', env: 'OTEL_EXPORTER_OTLP_ENDPOINT', description: `OTLP base URL (the signal's path is added: /v1/traces; ${OTLP_PROFILES_PATH} for profiles over OTLP)`, defaultText: 'http://localhost:4318', parse: parseUrl },
  otlpTracesEndpoint: { flag: 'otlp-traces-endpoint', arg: '<url>', env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', description: 'full OTLP traces URL (used as given)', parse: parseExactUrl },
  otlpProtocol: { flag: 'otlp-protocol', arg: '<protocol>', env: 'OTEL_EXPORTER_OTLP_PROTOCOL', description: `OTLP protocol: ${OTLP_PROTOCOLS.join(', ')}`, defaultText: 'http/protobuf', parse: oneOf(OTLP_PROTOCOLS) },
  profilesExporter: { flag: 'profiles-exporter', arg: '<name>', env: 'PYRO_RUN_PROFILES_EXPORTER', description: `where profiles go in remote mode: ${PROFILES_EXPORTERS.join(', ')} (the OTLP profiles signal, e.g. to a Collector or Pyroscope's /v1development/profiles)`, defaultText: 'pyroscope', parse: oneOf(PROFILES_EXPORTERS) },
  otlpProfilesEndpoint: { flag: 'otlp-profiles-endpoint', arg: '<url>', env: 'OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT', description: `full OTLP profiles URL (used as given; else the OTLP base URL + ${OTLP_PROFILES_PATH})`, parse: parseExactUrl },
  otlpHeaders: { flag: 'otlp-headers', arg: '<k=v,...>', env: 'OTEL_EXPORTER_OTLP_HEADERS', description: 'headers sent with OTLP exports (values URL-encoded)', secret: true, parse: parseHeaders },
} satisfies Record<string, Setting<any>>;

export type SettingKey = keyof typeof SETTINGS;
type ValueOf<K extends SettingKey> = (typeof SETTINGS)[K] extends Setting<infer T> ? T : never;

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

/** The OTLP TLS files' env var suffixes: OTEL_EXPORTER_OTLP_<suffix>, or OTEL_EXPORTER_OTLP_<SIGNAL>_<suffix> for one signal. */
const OTLP_TLS_SUFFIXES = { ca: 'CERTIFICATE', cert: 'CLIENT_CERTIFICATE', key: 'CLIENT_KEY' } as const;
type OtlpSignal = 'TRACES' | 'PROFILES' | 'LOGS' | 'METRICS';

/** The env vars that may name one signal's TLS files, the signal's own first. */
function otlpTlsVars(signal: OtlpSignal, part: keyof typeof OTLP_TLS_SUFFIXES): [string, string] {
  const suffix = OTLP_TLS_SUFFIXES[part];
  return [`OTEL_EXPORTER_OTLP_${signal}_${suffix}`, `OTEL_EXPORTER_OTLP_${suffix}`];
}

/**
 * One signal's TLS files: each from the signal's own variable, else the shared one, as the OTel
 * exporters choose. A client certificate without its key (or the reverse) cannot be used: a
 * problem, and neither is.
 */
export function readOtlpTlsFiles(env: Env, signal: OtlpSignal, problems: Problem[]): OtlpTlsFiles {
  const files: OtlpTlsFiles = {};
  for (const part of Object.keys(OTLP_TLS_SUFFIXES) as (keyof typeof OTLP_TLS_SUFFIXES)[]) {
    const name = otlpTlsVars(signal, part).find((candidate) => (env[candidate] ?? '').trim() !== '');
    if (name !== undefined) files[part] = { env: name, path: env[name]!.trim() };
  }
  const { cert, key } = files;
  if ((cert === undefined) !== (key === undefined)) {
    const given = (cert ?? key)!;
    const wanted = otlpTlsVars(signal, cert === undefined ? 'cert' : 'key').join(' or ');
    problems.push({ env: given.env, message: `${given.env} is set but ${wanted} is not: a client certificate needs both`, instead: 'no client certificate is sent' });
    delete files.cert;
    delete files.key;
  }
  return files;
}

export type Env = Readonly<Record<string, string | undefined>>;

export interface Facts {
  /** `name` of the app's package.json, the last fallback for the service name. */
  packageName?: string | undefined;
}

/** Reads one setting; an unset or blank var is "not given", a bad one is a Problem. */
export function readSetting<K extends SettingKey>(env: Env, key: K, problems: Problem[]): ValueOf<K> | undefined {
  const setting: Setting<ValueOf<K>> = SETTINGS[key] as unknown as Setting<ValueOf<K>>;
  return readVar(env, setting.env, setting.parse, problems);
}

function readVar<T>(env: Env, name: string, parse: (raw: string) => Parsed<T>, problems: Problem[]): T | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const parsed = parse(raw);
  if (parsed.ok) return parsed.value;
  problems.push({ env: name, message: `${name} ${parsed.message}` });
  return undefined;
}

/**
 * OTEL_RESOURCE_ATTRIBUTES (`k=v,...`, URL-encoded values) as the OTel env detector reads it:
 * entries without a key, or whose value is not valid URL encoding, are left out.
 */
export function parseResourceAttributes(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (raw ?? '').split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    try {
      out[part.slice(0, eq).trim()] = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      // Not valid URL encoding: the detector drops it too.
    }
  }
  return out;
}

/** Env vars that choose where and how pyro-run's own span export sends. */
const SPAN_EXPORT_ENV: readonly string[] = [
  SETTINGS.tracesExporter.env,
  SETTINGS.otlpEndpoint.env,
  SETTINGS.otlpTracesEndpoint.env,
  SETTINGS.otlpProtocol.env,
  ENV.otlpTracesProtocol,
  SETTINGS.otlpHeaders.env,
  ENV.otlpTracesHeaders,
  ENV.otlpCompression,
  ENV.otlpTracesCompression,
  ENV.otlpTimeout,
  ENV.otlpTracesTimeout,
  ...(['ca', 'cert', 'key'] as const).flatMap((part) => otlpTlsVars('TRACES', part)),
];

/**
 * The OTLP profiles export, by the OTel exporter spec's rules for a signal: its own endpoint used
 * as given, else the base URL plus the signal path; its headers added to the shared ones; its
 * compression over the shared one.
 */
function readProfilesExport(
  env: Env,
  shared: SharedOtlp,
  get: <K extends SettingKey>(key: K) => ValueOf<K> | undefined,
  problems: Problem[],
): Config['profilesExport'] {
  const { base } = shared;
  const compression = signalOver(env, ENV.otlpProfilesCompression, oneOf(OTLP_COMPRESSIONS), shared.compression, problems);
  const exporter = get('profilesExporter') ?? 'pyroscope';
  return {
    exporter,
    endpoint: get('otlpProfilesEndpoint') ?? (base === undefined ? DEFAULT_PROFILES_URL : `${base}${OTLP_PROFILES_PATH}`),
    headers: { ...shared.headers, ...readVar(env, ENV.otlpProfilesHeaders, parseHeaders, problems) },
    gzip: compression === 'gzip',
    // Only read when profiles go over OTLP: the shared files are the spans' business otherwise.
    tls: exporter === 'otlp' ? readOtlpTlsFiles(env, 'PROFILES', problems) : {},
    timeoutMs: signalOver(env, ENV.otlpProfilesTimeout, uploadTimeoutMs, shared.timeoutMs, problems),
  };
}

/** The shared OTLP settings, read once: what a signal's own variables override. */
interface SharedOtlp {
  base: string | undefined;
  protocol: OtlpProtocol | undefined;
  headers: Record<string, string> | undefined;
  compression: OtlpCompression | undefined;
  timeoutMs: number;
}

/** The env var names of one OTLP signal sent by the NodeSDK's pipelines and our sender (metrics, logs). */
const SIGNAL_VARS = {
  METRICS: { exporter: ENV.metricsExporter, endpoint: ENV.otlpMetricsEndpoint, protocol: ENV.otlpMetricsProtocol, headers: ENV.otlpMetricsHeaders, compression: ENV.otlpMetricsCompression, timeout: ENV.otlpMetricsTimeout, path: OTLP_METRICS_PATH },
  LOGS: { exporter: ENV.logsExporter, endpoint: ENV.otlpLogsEndpoint, protocol: ENV.otlpLogsProtocol, headers: ENV.otlpLogsHeaders, compression: ENV.otlpLogsCompression, timeout: ENV.otlpLogsTimeout, path: OTLP_LOGS_PATH },
} as const;

/**
 * One signal's exporters and OTLP export, by the OTel exporter spec's rules for a signal (as
 * readProfilesExport): the exporters listed as the NodeSDK reads OTEL_<SIGNAL>S_EXPORTER (an
 * unknown name is a problem and left out; `none` anywhere lists none).
 */
function readSignalExport<E extends string>(env: Env, signal: keyof typeof SIGNAL_VARS, known: readonly E[], shared: SharedOtlp, problems: Problem[]): OtlpSignalExport & { exporters: E[] } {
  const vars = SIGNAL_VARS[signal];
  const names = (env[vars.exporter] ?? '').split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '');
  const unknown = names.filter((name) => name !== NO_EXPORTER && !(known as readonly string[]).includes(name));
  if (unknown.length > 0) problems.push({ env: vars.exporter, message: `${vars.exporter} lists ${unknown.map((name) => `"${name}"`).join(', ')}, not one of ${known.join(', ')}, ${NO_EXPORTER}`, instead: 'ignored' });
  const exporters = names.includes(NO_EXPORTER) ? [] : known.filter((name) => names.includes(name));
  const protocol = readVar(env, vars.protocol, oneOf(OTLP_PROTOCOLS), problems) ?? shared.protocol ?? 'http/protobuf';
  return {
    exporters,
    protocol,
    endpoint: readVar(env, vars.endpoint, parseExactUrl, problems) ?? `${shared.base ?? OTLP_DEFAULT_BASE}${vars.path}`,
    headers: { ...shared.headers, ...readVar(env, vars.headers, parseHeaders, problems) },
    // Only read when the signal goes through us: the gRPC exporter reads its own.
    tls: overOwnOtlp({ exporters, protocol }) ? readOtlpTlsFiles(env, signal, problems) : {},
    gzip: signalOver(env, vars.compression, oneOf(OTLP_COMPRESSIONS), shared.compression, problems) === 'gzip',
    timeoutMs: signalOver(env, vars.timeout, uploadTimeoutMs, shared.timeoutMs, problems),
  };
}

/** The entries that are set: an exporter's options object, where an undefined entry would override its default. */
const definedOnly = <T extends object>(options: T): Partial<T> => Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<T>;

/** The logs export (readSignalExport) and OTEL_BLRP_* with the SDK's defaults. */
function readLogsExport(env: Env, shared: SharedOtlp, problems: Problem[]): Config['logs'] {
  const count = integer(1, 1_000_000, 'log records');
  const batchSize = readVar(env, ENV.blrpMaxExportBatchSize, count, problems);
  return {
    ...readSignalExport(env, 'LOGS', LOG_EXPORTERS, shared, problems),
    batch: {
      maxQueueSize: readVar(env, ENV.blrpMaxQueueSize, count, problems) ?? 2048,
      maxExportBatchSize: batchSize ?? 512,
      scheduledDelayMillis: readVar(env, ENV.blrpScheduleDelay, integer(0, 3_600_000, 'milliseconds'), problems) ?? 1000,
      firstFullBatch: firstFullBatch(batchSize),
    },
  };
}

/**
 * The metrics export (readSignalExport), the periodic reader's interval and timeout with the
 * NodeSDK's defaults (60 s, 30 s; the timeout clamped to the interval, as it does), and the OTLP
 * metric exporters' temporality preference (default cumulative), and where the prometheus exporter listens.
 */
function readMetricsExport(env: Env, shared: SharedOtlp, problems: Problem[]): Config['metrics'] {
  const millis = integer(1, 86_400_000, 'milliseconds');
  const intervalMs = readVar(env, ENV.metricExportInterval, millis, problems) ?? 60_000;
  return {
    ...readSignalExport(env, 'METRICS', METRIC_EXPORTERS, shared, problems),
    intervalMs,
    collectTimeoutMs: Math.min(intervalMs, readVar(env, ENV.metricExportTimeout, millis, problems) ?? 30_000),
    temporality: readVar(env, ENV.otlpMetricsTemporality, oneOf(METRIC_TEMPORALITIES), problems) ?? 'cumulative',
    prometheus: definedOnly({ host: env[ENV.prometheusHost]?.trim() || undefined, port: readVar(env, ENV.prometheusPort, integer(0, 65_535, 'port'), problems) }),
  };
}

type OtlpCompression = (typeof OTLP_COMPRESSIONS)[number];

/** Whether a signal's exporters send it over OTLP/HTTP, which pyro-run's sender carries (grpc is the SDK's exporter's). */
export function overOwnOtlp(signal: { exporters: readonly string[]; protocol: OtlpProtocol }): boolean {
  return signal.exporters.includes('otlp') && signal.protocol !== 'grpc';
}

/** A signal's OTLP setting: its own variable, else the shared value (read once, by the caller), as the OTel exporter spec orders them. */
function signalOver<T, S extends T | undefined>(env: Env, signalVar: string, parse: (raw: string) => Parsed<T>, shared: S, problems: Problem[]): T | S {
  return readVar(env, signalVar, parse, problems) ?? shared;
}

/** `host:port`, `[v6]:port`: no scheme, no path. */
const HOST_PORT = /^(?:[^\s/:?#@[\]]+|\[[0-9a-f:.]+\]):\d{1,5}$/i;

/**
 * An OTLP endpoint given as `host:port`, as docker-compose files write it for a collector's gRPC
 * port: the OTel exporter spec takes it for OTLP/gRPC, with OTEL_EXPORTER_OTLP_INSECURE choosing
 * plaintext or TLS, and OpenTelemetry's gRPC exporter, which reads that variable itself, sends so.
 */
function grpcHostPort(raw: string | undefined): string | undefined {
  const value = raw?.trim();
  return value !== undefined && HOST_PORT.test(value) ? value : undefined;
}

/** The traces URL the OTLP/HTTP exporter will post to, per the OTel spec's endpoint rules. */
function tracesEndpoint(signalUrl: string | undefined, baseUrl: string | undefined, protocol: OtlpProtocol): string | undefined {
  if (signalUrl !== undefined) return signalUrl;
  if (baseUrl === undefined) return undefined;
  return protocol === 'grpc' ? baseUrl : `${baseUrl}/v1/traces`;
}

const truthy = (raw: string | undefined) => raw !== undefined && ['true', '1', 'yes', 'on'].includes(raw.trim().toLowerCase());

/**
 * env → Config. Pure: the caller passes env and facts, nothing global is read. Every bad
 * value becomes a Problem and the default is used in its place.
 */
export function readConfig(env: Env, facts: Facts = {}): { config: Config; problems: Problem[] } {
  const problems: Problem[] = [];
  const get = <K extends SettingKey>(key: K) => readSetting(env, key, problems);

  const sharedProtocol = get('otlpProtocol');
  const protocol = readVar(env, ENV.otlpTracesProtocol, oneOf(OTLP_PROTOCOLS), problems) ?? sharedProtocol ?? 'http/protobuf';
  const grpcBase = protocol === 'grpc' ? grpcHostPort(env[SETTINGS.otlpEndpoint.env]) : undefined;
  const grpcTraces = protocol === 'grpc' ? grpcHostPort(env[SETTINGS.otlpTracesEndpoint.env]) : undefined;
  // A `host:port` base is the gRPC exporter's alone: profiles over OTLP/HTTP keep their default.
  const otlpBase = grpcBase === undefined ? get('otlpEndpoint') : undefined;
  const sharedOtlpHeaders = get('otlpHeaders');
  const sharedCompression = readVar(env, ENV.otlpCompression, oneOf(OTLP_COMPRESSIONS), problems);
  // Read before settingsGiven below, which leaves out the variables with a problem.
  const tracesTls = readOtlpTlsFiles(env, 'TRACES', problems);
  const tracesGzip = signalOver(env, ENV.otlpTracesCompression, oneOf(OTLP_COMPRESSIONS), sharedCompression, problems) === 'gzip';
  // The OTLP exporters' timeout (OTel exporter spec: per signal, else shared), over pyro-run's own for every upload.
  const uploadTimeout = get('uploadTimeout') ?? 10_000;
  const sharedOtlpTimeout = readVar(env, ENV.otlpTimeout, uploadTimeoutMs, problems) ?? uploadTimeout;
  const tracesTimeout = signalOver(env, ENV.otlpTracesTimeout, uploadTimeoutMs, sharedOtlpTimeout, problems);
  const otlpHeaders = { ...sharedOtlpHeaders, ...readVar(env, ENV.otlpTracesHeaders, parseHeaders, problems) };
  const sharedOtlp: SharedOtlp = { base: otlpBase, protocol: sharedProtocol, headers: sharedOtlpHeaders, compression: sharedCompression, timeoutMs: sharedOtlpTimeout };

  const basicAuthUser = get('basicAuthUser');
  const basicAuthPassword = get('basicAuthPassword');
  if ((basicAuthUser === undefined) !== (basicAuthPassword === undefined)) {
    const missing = basicAuthUser === undefined ? SETTINGS.basicAuthUser.env : SETTINGS.basicAuthPassword.env;
    problems.push({ env: missing, message: `basic auth needs both ${SETTINGS.basicAuthUser.env} and ${SETTINGS.basicAuthPassword.env}; ${missing} is missing` });
  }
  const authToken = get('authToken');
  const hasBasic = basicAuthUser !== undefined && basicAuthPassword !== undefined;
  if (authToken !== undefined && hasBasic) {
    problems.push({ env: SETTINGS.authToken.env, message: `${SETTINGS.authToken.env} and basic auth are both set; the bearer token is used` });
  }

  const explicitExporter = get('tracesExporter');
  const resourceAttributes = parseResourceAttributes(env[ENV.resourceAttributes]);
  const serviceName =
    get('serviceName') ??
    (resourceAttributes['service.name'] || undefined) ??
    readVar(env, ENV.applicationName, text, problems) ??
    pm2AppName(env) ??
    facts.packageName ??
    // OTel's own default is unknown_service:node, but ':' is not allowed in a Pyroscope service
    // name, and spans and profiles must carry the same one.
    'unknown_service';

  const spanBatchSize = readVar(env, ENV.bspMaxExportBatchSize, integer(1, 1_000_000, 'spans'), problems);
  const config: Config = {
    serviceName,
    pyroscope: {
      serverAddress: get('server'),
      authToken,
      basicAuthUser: hasBasic && authToken === undefined ? basicAuthUser : undefined,
      basicAuthPassword: hasBasic && authToken === undefined ? basicAuthPassword : undefined,
      tenantId: get('tenantId'),
      headers: get('pyroscopeHeaders') ?? {},
      labels: readLabels(env, problems),
      uploadTimeoutMs: uploadTimeout,
      spoolDir: get('spoolDir'),
    },
    tlsSkipVerify: get('insecureSkipTlsVerify') ?? false,
    proxy: undefined,
    profiles: get('profiles') ?? ['cpu', 'wall'],
    workers: get('workers') ?? true,
    quiet: get('quiet') ?? false,
    spanScope: get('spanScope') ?? 'root',
    local: undefined,
    sourceMaps: get('sourceMaps') ?? true,
    traceIdLabel: false,
    flushIntervalMs: get('flushInterval') ?? 15_000,
    samplingIntervalMicros: get('samplingInterval') ?? 10_000,
    maxSpanNames: get('maxSpanNames') ?? 100,
    heap: { intervalBytes: get('heapSamplingInterval') ?? 524_288, stackDepth: get('heapStackDepth') ?? 64 },
    shutdownTimeoutMs: get('shutdownTimeout') ?? 5_000,
    orphanedApp: get('orphanedApp') ?? 'stop',
    skip: get('skip') ?? [],
    logLevel: get('logLevel') ?? 'warn',
    traces: {
      exporters: explicitExporter ?? ['otlp'],
      protocol,
      endpoint: tracesEndpoint(grpcTraces ?? get('otlpTracesEndpoint'), otlpBase ?? grpcBase, protocol),
      headers: otlpHeaders,
      // Those in effect: a bad value is a problem, and the default stands in for it.
      settingsGiven: SPAN_EXPORT_ENV.filter((name) => (env[name] ?? '').trim() !== '' && !problems.some((problem) => problem.env === name)),
      batch: {
        maxQueueSize: readVar(env, ENV.bspMaxQueueSize, integer(1, 1_000_000, 'spans'), problems) ?? 2048,
        maxExportBatchSize: spanBatchSize ?? 512,
        scheduledDelayMillis: readVar(env, ENV.bspScheduleDelay, integer(0, 3_600_000, 'milliseconds'), problems) ?? 5000,
        firstFullBatch: firstFullBatch(spanBatchSize),
      },
      tls: tracesTls,
      gzip: tracesGzip,
      timeoutMs: tracesTimeout,
      dbStatements: get('dbStatements') ?? 'sanitized',
    },
    resourceAttributes,
    profilesExport: readProfilesExport(env, sharedOtlp, get, problems),
    sdkDisabled: truthy(env[ENV.sdkDisabled]),
    metricsRequested: exportersAskedFor(env[ENV.metricsExporter]),
    logsRequested: exportersAskedFor(env[ENV.logsExporter]),
    metrics: readMetricsExport(env, sharedOtlp, problems),
    logs: readLogsExport(env, sharedOtlp, problems),
  };
  const badProxy = readProxySettings(env, config, problems);
  // A destination that is set but wrong is a remote set-up with a mistake: that signal is not sent,
  // and nothing is recorded in the app's folder instead.
  const wrong = (...names: string[]) => problems.filter((p) => names.includes(p.env));
  const badServer = wrong(SETTINGS.server.env);
  for (const problem of badServer) problem.instead = 'profiles are not sent';
  const badTraces = config.traces.endpoint === undefined ? wrong(SETTINGS.otlpEndpoint.env, SETTINGS.otlpTracesEndpoint.env) : [];
  for (const problem of badTraces) problem.instead = 'spans are not sent';
  if (badTraces.length > 0 && explicitExporter === undefined) config.traces.exporters = [];
  const otlpProfiles = config.profilesExport.exporter === 'otlp';
  config.local = localMode(config, explicitExporter !== undefined || otlpProfiles || badServer.length > 0 || badTraces.length > 0 || badProxy.length > 0, {
    dir: get('out'),
    runMb: get('maxRunSize'),
    totalMb: get('maxTotalSize'),
  });
  // In local files trace_id costs nothing; sent to a Pyroscope before 2.1 it becomes a series label.
  // Over OTLP a sample's link carries its trace ID, whatever the setting.
  config.traceIdLabel = (otlpProfiles && config.local === undefined) || (get('traceIdLabel') ?? config.local !== undefined);
  return { config, problems };
}

/**
 * The proxy variables into `config.proxy`. A proxy that is set but cannot be used stops the uploads
 * that would go through it, with one problem naming the variable, rather than sending them around
 * it: a proxy is usually there because nothing else gets out, or because nothing may (curl refuses
 * such a value too). Returns those problems. Set before local mode is decided: a destination
 * stopped that way still counts as chosen.
 */
function readProxySettings(env: Env, config: Config, problems: Problem[]): Problem[] {
  const reading = readProxies(env);
  config.proxy = reading.settings;
  // Only worth a word when there is a proxy to bypass.
  if (reading.ignored && (reading.settings || reading.unusable.length > 0)) {
    const { env: name, entries } = reading.ignored;
    problems.push({ env: name, message: `${name} entries ${entries.map((e) => `"${e}"`).join(', ')} are no host name, domain, IP address or CIDR range`, instead: 'they are ignored' });
  }
  const stopped: Problem[] = [];
  const profilesOverOtlp = config.profilesExport.exporter === 'otlp';
  const server = profilesOverOtlp ? config.profilesExport.endpoint : config.pyroscope.serverAddress;
  const ownSpans = overOwnOtlp(config.traces) ? config.traces.endpoint : undefined;
  const ownSignals = [{ name: 'metrics', signal: config.metrics }, { name: 'logs', signal: config.logs }].map((own) => ({ ...own, endpoint: overOwnOtlp(own.signal) ? own.signal.endpoint : undefined }));
  for (const bad of reading.unusable) {
    const lost: string[] = [];
    if (server !== undefined && unusableProxyFor(server, reading) === bad) {
      if (profilesOverOtlp) config.profilesExport.endpoint = undefined;
      else config.pyroscope.serverAddress = undefined;
      lost.push('profiles');
    }
    if (ownSpans !== undefined && unusableProxyFor(ownSpans, reading) === bad) {
      config.traces.exporters = config.traces.exporters.filter((name) => name !== 'otlp');
      lost.push('spans');
    }
    for (const { name, signal, endpoint } of ownSignals) {
      if (endpoint === undefined || unusableProxyFor(endpoint, reading) !== bad) continue;
      signal.endpoint = undefined;
      lost.push(name);
    }
    // Not a problem of ours when no upload would go through it.
    if (lost.length === 0) continue;
    const problem: Problem = { env: bad.env, message: `${bad.env} ${bad.message}`, instead: `${lost.join(' and ')} are not sent (not around the proxy either)` };
    problems.push(problem);
    stopped.push(problem);
  }
  return stopped;
}

/** Default recording folder, relative to the app's working directory. */
export const DEFAULT_OUTPUT_DIR = 'pyro-run-data';

/**
 * Local mode: an explicit output dir forces it; otherwise it is the default when no destination
 * is configured at all (no Pyroscope, no OTLP endpoint, no traces exporter chosen; a destination
 * set but wrong counts as one).
 */
function localMode(
  config: Config,
  destinationChosen: boolean,
  given: { dir: string | undefined; runMb: number | undefined; totalMb: number | undefined },
): Config['local'] {
  const anyDestination = config.pyroscope.serverAddress !== undefined || config.traces.endpoint !== undefined || destinationChosen;
  const { dir } = given;
  if (dir === undefined && anyDestination) return undefined;
  return {
    dir: dir ?? DEFAULT_OUTPUT_DIR,
    capBytes: mbToBytes(given.runMb ?? 200),
    totalCapBytes: mbToBytes(given.totalMb ?? 1024),
    quiet: config.quiet,
    forced: dir !== undefined,
  };
}

const mbToBytes = (mb: number) => Math.round(mb * 1024 * 1024);

/** A byte count in the unit the size settings take, for messages: `1.25 MB`. */
export const megabytes = (bytes: number) => `${Math.round((bytes / (1024 * 1024)) * 100) / 100} MB`;

/** Which env var a flag sets: the CLI's half of the table. */
export function settingByFlag(flag: string): [SettingKey, Setting] | undefined {
  for (const [key, setting] of Object.entries(SETTINGS) as [SettingKey, Setting][]) {
    if (setting.flag === flag) return [key, setting];
  }
  return undefined;
}

/** Names of env vars whose values must never be printed. */
export const SECRET_ENV: ReadonlySet<string> = new Set(
  [...Object.values(SETTINGS).filter((s: Setting) => s.secret).map((s) => s.env), ENV.otlpTracesHeaders, ENV.otlpProfilesHeaders, ENV.otlpLogsHeaders, ENV.otlpMetricsHeaders],
);
