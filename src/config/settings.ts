import { PROFILE_TYPE_NAMES } from '../profiling/profile-types.js';
import { parseLabels } from './labels.js';
import { OTLP_PROFILES_PATH, OTLP_PROTOCOLS } from './otlp-spec.js';
import {
  integer,
  integerOrOff,
  oneOf,
  onOff,
  parseExactUrl,
  parseHeaders,
  parseProfiles,
  parseSkipList,
  parseTracesExporters,
  parseUrl,
  positiveNumber,
  text,
  type Parsed,
} from './parse.js';
import { DB_STATEMENTS, LOG_LEVELS, NO_EXPORTER, ORPHANED_APP, PROFILES_EXPORTERS, SPAN_EXPORTERS, SPAN_SCOPES } from './types.js';

/**
 * The one table that maps every CLI flag to the env var the preload reads (the CLI turns flags into
 * env and rejects problems, exit 2; the preload turns the same problems into one warning each and
 * falls back to the default, so the app always runs). The env vars read outside it, and how one
 * var is read: env-vars.ts.
 */

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

/** An upload's timeout, pyro-run's own or an OTLP exporter's. */
export const uploadTimeoutMs = integer(100, 600_000, 'milliseconds');

/** The table. Order is the order of `--help`. */
export const SETTINGS = {
  serviceName: {
    flag: 'service-name',
    arg: '<name>',
    env: 'OTEL_SERVICE_NAME',
    description: "service.name of spans and profiles (else PYROSCOPE_APPLICATION_NAME, else the app's name in PM2, else package.json name)",
    parse: text,
  },
  server: {
    flag: 'server',
    arg: '<url>',
    env: 'PYROSCOPE_SERVER_ADDRESS',
    description: 'Pyroscope base URL that receives profiles at /ingest',
    parse: parseUrl,
  },
  authToken: { flag: 'auth-token', arg: '<token>', env: 'PYROSCOPE_AUTH_TOKEN', description: 'bearer token for Pyroscope', secret: true, parse: text },
  basicAuthUser: {
    flag: 'basic-auth-user',
    arg: '<user>',
    env: 'PYROSCOPE_BASIC_AUTH_USER',
    description: 'basic-auth user for Pyroscope (Grafana Cloud: the numeric user)',
    parse: text,
  },
  basicAuthPassword: {
    flag: 'basic-auth-password',
    arg: '<password>',
    env: 'PYROSCOPE_BASIC_AUTH_PASSWORD',
    description: 'basic-auth password for Pyroscope (Grafana Cloud: an API token)',
    secret: true,
    parse: text,
  },
  tenantId: { flag: 'tenant-id', arg: '<id>', env: 'PYROSCOPE_TENANT_ID', description: 'tenant sent as X-Scope-OrgID', parse: text },
  pyroscopeHeaders: {
    flag: 'pyroscope-headers',
    arg: '<k=v,...>',
    env: 'PYRO_RUN_PYROSCOPE_HEADERS',
    description: 'extra HTTP headers for Pyroscope uploads (values URL-encoded)',
    secret: true,
    parse: parseHeaders,
  },
  labels: { flag: 'labels', arg: '<k=v,...>', env: 'PYROSCOPE_LABELS', description: 'static labels added to every profile', parse: parseLabels },
  profiles: {
    flag: 'profiles',
    arg: '<list>',
    env: 'PYRO_RUN_PROFILES',
    description: `profiles to collect: ${PROFILE_TYPE_NAMES.join(', ')}, or none`,
    defaultText: 'cpu,wall',
    parse: parseProfiles,
  },
  workers: {
    flag: 'workers',
    arg: '<on|off>',
    env: 'PYRO_RUN_WORKERS',
    description:
      "profile worker threads too (a thread_name label on every sample), with the work a worker does for a message or a pool's task labelled with the span that sent it",
    defaultText: 'on',
    parse: onOff,
  },
  spanScope: {
    flag: 'span-scope',
    arg: '<scope>',
    env: 'PYRO_RUN_SPAN_SCOPE',
    description: 'root: samples carry the local-root span; all: each span its own',
    defaultText: 'root',
    parse: oneOf(SPAN_SCOPES),
  },
  out: {
    flag: 'out',
    arg: '<dir>',
    env: 'PYRO_RUN_OUTPUT_DIR',
    description: 'record into DIR (one subfolder per run) instead of sending; forces local mode',
    defaultText: './pyro-run-data when no backend is set',
    parse: text,
  },
  maxRunSize: {
    flag: 'max-run-size',
    arg: '<MB>',
    env: 'PYRO_RUN_MAX_RUN_MB',
    description: 'local mode: disk cap per run; spans take half at most, older profile windows are merged to fit',
    defaultText: '200',
    parse: positiveNumber(1_000_000, 'megabytes'),
  },
  maxTotalSize: {
    flag: 'max-total-size',
    arg: '<MB>',
    env: 'PYRO_RUN_MAX_TOTAL_MB',
    description: 'local mode: disk cap of all the runs in the output folder; the oldest finished runs go first, running ones are kept',
    defaultText: '1024',
    parse: positiveNumber(1_000_000, 'megabytes'),
  },
  quiet: {
    flag: 'quiet',
    arg: '',
    env: 'PYRO_RUN_QUIET',
    description: "no warnings about the instrumentations' internals (they go to the debug log); local mode: no notices and no exit summary",
    defaultText: 'off',
    parse: onOff,
  },
  sourceMaps: {
    flag: 'source-maps',
    arg: '<on|off>',
    env: 'PYRO_RUN_SOURCE_MAPS',
    description: "name the original (e.g. TypeScript) file and line in profiles, from the app's source maps",
    defaultText: 'on',
    parse: onOff,
  },
  traceIdLabel: {
    flag: 'trace-id-label',
    arg: '<on|off>',
    env: 'PYRO_RUN_TRACE_ID_LABEL',
    description:
      'also label samples with trace_id (Pyroscope 2.1+ keeps it per sample, as span_id; before 2.1 it becomes a series label: one series per trace)',
    defaultText: 'on in local mode, else off',
    parse: onOff,
  },
  maxSpanNames: {
    flag: 'max-span-names',
    arg: '<n>',
    env: 'PYRO_RUN_MAX_SPAN_NAMES',
    description:
      'distinct span_name label values per profile window (IDs in span names are folded into {id}, {uuid}, {hex}, {email} first); the spans past it are labelled "(other span names)"',
    defaultText: '100',
    parse: integer(2, 5000, 'span names'),
  },
  flushInterval: {
    flag: 'flush-interval',
    arg: '<ms>',
    env: 'PYROSCOPE_FLUSH_INTERVAL_MS',
    description: 'length of one profile window',
    defaultText: '15000',
    parse: integer(1000, 3_600_000, 'milliseconds'),
  },
  samplingInterval: {
    flag: 'sampling-interval',
    arg: '<us>',
    env: 'PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS',
    description: 'time between profiler samples',
    defaultText: '10000',
    parse: integer(100, 1_000_000, 'microseconds'),
  },
  blockThreshold: {
    flag: 'block-threshold',
    arg: '<ms>',
    env: 'PYRO_RUN_BLOCK_THRESHOLD_MS',
    description:
      "record every stall of the main thread's event loop this long or longer, with the span that held it and its stack (docs/event-loop-blocks.md); off (or 0): none",
    defaultText: '100',
    parse: integerOrOff(20, 600_000, 'milliseconds'),
  },
  heapSamplingInterval: {
    flag: 'heap-sampling-interval',
    arg: '<bytes>',
    env: 'PYROSCOPE_HEAP_SAMPLING_INTERVAL_BYTES',
    description: 'heap profile: mean bytes allocated between two samples',
    defaultText: '524288',
    parse: integer(1024, 1 << 30, 'bytes'),
  },
  heapStackDepth: {
    flag: 'heap-stack-depth',
    arg: '<frames>',
    env: 'PYROSCOPE_HEAP_STACK_DEPTH',
    description: 'heap profile: deepest stack recorded per sample',
    defaultText: '64',
    parse: integer(1, 1024, 'frames'),
  },
  spoolDir: {
    flag: 'spool-dir',
    arg: '<dir>',
    env: 'PYRO_RUN_SPOOL_DIR',
    description:
      'remote mode (to `/ingest` or over OTLP): where the heap profile taken when the app hits its heap limit waits for the next start to send it (in a container: a volume)',
    defaultText: '<tmp>/pyro-run-spool',
    parse: text,
  },
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
    description:
      'do not verify the TLS certificates of the Pyroscope and OTLP endpoints. Risky: anyone on the network path can then impersonate them and read the profiles, spans and credentials; prefer NODE_EXTRA_CA_CERTS=<ca.pem>',
    defaultText: 'off',
    parse: onOff,
  },
  shutdownTimeout: {
    flag: 'shutdown-timeout',
    arg: '<ms>',
    env: 'PYRO_RUN_SHUTDOWN_TIMEOUT_MS',
    description: 'deadline for the final flush at exit',
    defaultText: '5000',
    parse: integer(0, 600_000, 'milliseconds'),
  },
  orphanedApp: {
    flag: 'orphaned-app',
    arg: '<stop|keep>',
    env: 'PYRO_RUN_ORPHANED_APP',
    description:
      'when the pyro-run CLI itself is killed (SIGKILL) while the app runs: stop the app as SIGTERM would, or keep it running (Linux; daemons started through pyro-run are never stopped)',
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
    description:
      "SQL statements on spans (db.statement, db.query.text): sanitized, their literals replaced by ? before they are sent or written (an ORM inlines users' values into its SQL); raw, as recorded",
    defaultText: 'sanitized',
    parse: oneOf(DB_STATEMENTS),
  },
  logLevel: {
    flag: 'log-level',
    arg: '<level>',
    env: 'PYRO_RUN_LOG_LEVEL',
    description: `pyro-run's own messages: ${LOG_LEVELS.join(', ')}`,
    defaultText: 'warn',
    parse: oneOf(LOG_LEVELS),
  },
  tracesExporter: {
    flag: 'traces-exporter',
    arg: '<list>',
    env: 'OTEL_TRACES_EXPORTER',
    description: `where spans go: ${SPAN_EXPORTERS.join(', ')} or both (comma-separated), or ${NO_EXPORTER}`,
    defaultText: 'otlp',
    parse: parseTracesExporters,
  },
  otlpEndpoint: {
    flag: 'otlp-endpoint',
    arg: '<url>',
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    description: `OTLP base URL (the signal's path is added: /v1/traces; ${OTLP_PROFILES_PATH} for profiles over OTLP)`,
    defaultText: 'http://localhost:4318',
    parse: parseUrl,
  },
  otlpTracesEndpoint: {
    flag: 'otlp-traces-endpoint',
    arg: '<url>',
    env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    description: 'full OTLP traces URL (used as given)',
    parse: parseExactUrl,
  },
  otlpProtocol: {
    flag: 'otlp-protocol',
    arg: '<protocol>',
    env: 'OTEL_EXPORTER_OTLP_PROTOCOL',
    description: `OTLP protocol: ${OTLP_PROTOCOLS.join(', ')}`,
    defaultText: 'http/protobuf',
    parse: oneOf(OTLP_PROTOCOLS),
  },
  profilesExporter: {
    flag: 'profiles-exporter',
    arg: '<name>',
    env: 'PYRO_RUN_PROFILES_EXPORTER',
    description: `where profiles go in remote mode: ${PROFILES_EXPORTERS.join(', ')} (the OTLP profiles signal, e.g. to a Collector or Pyroscope's /v1development/profiles)`,
    defaultText: 'pyroscope',
    parse: oneOf(PROFILES_EXPORTERS),
  },
  otlpProfilesEndpoint: {
    flag: 'otlp-profiles-endpoint',
    arg: '<url>',
    env: 'OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT',
    description: `full OTLP profiles URL (used as given; else the OTLP base URL + ${OTLP_PROFILES_PATH})`,
    parse: parseExactUrl,
  },
  otlpHeaders: {
    flag: 'otlp-headers',
    arg: '<k=v,...>',
    env: 'OTEL_EXPORTER_OTLP_HEADERS',
    description: 'headers sent with OTLP exports (values URL-encoded)',
    secret: true,
    parse: parseHeaders,
  },
} satisfies Record<string, Setting>;

export type SettingKey = keyof typeof SETTINGS;
export type ValueOf<K extends SettingKey> = (typeof SETTINGS)[K] extends Setting<infer T> ? T : never;
