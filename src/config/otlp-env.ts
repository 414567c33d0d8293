import {
  OTLP_COMPRESSIONS,
  OTLP_DEFAULT_BASE,
  OTLP_LOGS_PATH,
  OTLP_METRICS_PATH,
  OTLP_PROFILES_PATH,
  OTLP_PROTOCOLS,
  OTLP_TRACES_PATH,
  type OtlpCompression,
  type OtlpProtocol,
  type OtlpSignal,
} from './otlp-spec.js';
import { oneOf, parseExactUrl, parseHeaders } from './parse.js';
import { ENV, readSetting, readVar } from './env-vars.js';
import { SETTINGS, uploadTimeoutMs } from './settings.js';
import type { Env, OtlpSignalExport, OtlpTlsFiles, Problem } from './types.js';

/**
 * One signal's OTLP settings by the OTel exporter spec ("Configuration Options"): each from the
 * signal's own OTEL_EXPORTER_OTLP_<SIGNAL>_* variable, else the shared OTEL_EXPORTER_OTLP_* one,
 * else the spec's default; the signal's headers added to the shared ones. Which signal reads what,
 * and who sends it, is signal-routes.ts's to decide.
 */

/** The shared variables: what a signal's own one overrides. */
const SHARED_VARS = {
  endpoint: SETTINGS.otlpEndpoint.env,
  protocol: SETTINGS.otlpProtocol.env,
  headers: SETTINGS.otlpHeaders.env,
  compression: ENV.otlpCompression,
  timeout: ENV.otlpTimeout,
} as const;

/** Each signal's own variables (profiles have no protocol of theirs: always http/protobuf), and its OTLP/HTTP path. */
const SIGNAL_VARS = {
  TRACES: {
    endpoint: SETTINGS.otlpTracesEndpoint.env,
    protocol: ENV.otlpTracesProtocol,
    headers: ENV.otlpTracesHeaders,
    compression: ENV.otlpTracesCompression,
    timeout: ENV.otlpTracesTimeout,
    path: OTLP_TRACES_PATH,
  },
  PROFILES: {
    endpoint: SETTINGS.otlpProfilesEndpoint.env,
    protocol: undefined,
    headers: ENV.otlpProfilesHeaders,
    compression: ENV.otlpProfilesCompression,
    timeout: ENV.otlpProfilesTimeout,
    path: OTLP_PROFILES_PATH,
  },
  METRICS: {
    endpoint: ENV.otlpMetricsEndpoint,
    protocol: ENV.otlpMetricsProtocol,
    headers: ENV.otlpMetricsHeaders,
    compression: ENV.otlpMetricsCompression,
    timeout: ENV.otlpMetricsTimeout,
    path: OTLP_METRICS_PATH,
  },
  LOGS: {
    endpoint: ENV.otlpLogsEndpoint,
    protocol: ENV.otlpLogsProtocol,
    headers: ENV.otlpLogsHeaders,
    compression: ENV.otlpLogsCompression,
    timeout: ENV.otlpLogsTimeout,
    path: OTLP_LOGS_PATH,
  },
} as const satisfies Record<OtlpSignal, Record<keyof typeof SHARED_VARS, string | undefined> & { path: string }>;

/** The shared settings, read once. */
export interface SharedOtlp {
  protocol: OtlpProtocol | undefined;
  /** OTEL_EXPORTER_OTLP_ENDPOINT as an http(s) URL, trailing slashes gone. */
  base: string | undefined;
  /** OTEL_EXPORTER_OTLP_ENDPOINT as `host:port`, when spans go over gRPC (see grpcHostPort). */
  grpcBase: string | undefined;
  headers: Record<string, string> | undefined;
  compression: OtlpCompression | undefined;
  timeoutMs: number;
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

/** A signal's protocol: its own variable, else the shared one, else http/protobuf (the spec's default). */
export function signalProtocol(env: Env, signal: Exclude<OtlpSignal, 'PROFILES'>, shared: OtlpProtocol | undefined, problems: Problem[]): OtlpProtocol {
  return readVar(env, SIGNAL_VARS[signal].protocol, oneOf(OTLP_PROTOCOLS), problems) ?? shared ?? 'http/protobuf';
}

/**
 * The shared settings. The OTLP exporters' timeout stands over pyro-run's own for every upload.
 * A `host:port` base is taken only when spans go over gRPC, and then it is the gRPC exporter's
 * alone: the signals sent over OTLP/HTTP keep their default base.
 */
export function readSharedOtlp(
  env: Env,
  given: { protocol: OtlpProtocol | undefined; spansOverGrpc: boolean; uploadTimeoutMs: number },
  problems: Problem[],
): SharedOtlp {
  const grpcBase = given.spansOverGrpc ? grpcHostPort(env[SHARED_VARS.endpoint]) : undefined;
  return {
    protocol: given.protocol,
    base: grpcBase === undefined ? readSetting(env, 'otlpEndpoint', problems) : undefined,
    grpcBase,
    headers: readSetting(env, 'otlpHeaders', problems),
    compression: readVar(env, SHARED_VARS.compression, oneOf(OTLP_COMPRESSIONS), problems),
    timeoutMs: readVar(env, SHARED_VARS.timeout, uploadTimeoutMs, problems) ?? given.uploadTimeoutMs,
  };
}

/**
 * The spans' endpoint, per the spec's endpoint rules: the signal's own as given (over gRPC,
 * `host:port` too), else the base URL plus /v1/traces (over gRPC the base as it is); undefined
 * when neither is set, for the exporter's own default.
 */
function tracesEndpoint(env: Env, protocol: OtlpProtocol, shared: SharedOtlp, problems: Problem[]): string | undefined {
  const grpc = protocol === 'grpc';
  const own = (grpc ? grpcHostPort(env[SIGNAL_VARS.TRACES.endpoint]) : undefined) ?? readSetting(env, 'otlpTracesEndpoint', problems);
  if (own !== undefined) return own;
  const base = shared.base ?? shared.grpcBase;
  if (base === undefined) return undefined;
  return grpc ? base : `${base}${OTLP_TRACES_PATH}`;
}

/**
 * One signal's OTLP export settings. The endpoint: the signal's own used as given, else the base
 * URL plus the signal's path, else the default base plus that path (spans: see tracesEndpoint).
 * TLS files are read only where `readTls` says the signal goes through pyro-run's sender.
 */
export function readOtlpSignal(
  env: Env,
  signal: OtlpSignal,
  protocol: OtlpProtocol,
  shared: SharedOtlp,
  readTls: boolean,
  problems: Problem[],
): OtlpSignalExport {
  const vars = SIGNAL_VARS[signal];
  return {
    protocol,
    endpoint:
      signal === 'TRACES'
        ? tracesEndpoint(env, protocol, shared, problems)
        : (readVar(env, vars.endpoint, parseExactUrl, problems) ?? `${shared.base ?? OTLP_DEFAULT_BASE}${vars.path}`),
    headers: { ...shared.headers, ...readVar(env, vars.headers, parseHeaders, problems) },
    tls: readTls ? readOtlpTlsFiles(env, signal, problems) : {},
    gzip: (readVar(env, vars.compression, oneOf(OTLP_COMPRESSIONS), problems) ?? shared.compression) === 'gzip',
    timeoutMs: readVar(env, vars.timeout, uploadTimeoutMs, problems) ?? shared.timeoutMs,
  };
}

/** The OTLP TLS files' env var suffixes: OTEL_EXPORTER_OTLP_<suffix>, or OTEL_EXPORTER_OTLP_<SIGNAL>_<suffix> for one signal. */
const OTLP_TLS_SUFFIXES = { ca: 'CERTIFICATE', cert: 'CLIENT_CERTIFICATE', key: 'CLIENT_KEY' } as const;
type TlsPart = keyof typeof OTLP_TLS_SUFFIXES;
const TLS_PARTS = Object.keys(OTLP_TLS_SUFFIXES) as TlsPart[];

/** The env vars that may name one signal's TLS file, the signal's own first. */
function otlpTlsVars(signal: OtlpSignal, part: TlsPart): [string, string] {
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
  for (const part of TLS_PARTS) {
    const name = otlpTlsVars(signal, part).find((candidate) => (env[candidate] ?? '').trim() !== '');
    if (name !== undefined) files[part] = { env: name, path: env[name]!.trim() };
  }
  const { cert, key } = files;
  if ((cert === undefined) !== (key === undefined)) {
    const given = (cert ?? key)!;
    const wanted = otlpTlsVars(signal, cert === undefined ? 'cert' : 'key').join(' or ');
    problems.push({
      env: given.env,
      message: `${given.env} is set but ${wanted} is not: a client certificate needs both`,
      instead: 'no client certificate is sent',
    });
    delete files.cert;
    delete files.key;
  }
  return files;
}

/** Env vars that choose where and how pyro-run's own span export sends: for each setting the shared one, then the signal's. */
const SPAN_EXPORT_ENV: readonly string[] = [
  SETTINGS.tracesExporter.env,
  ...(['endpoint', 'protocol', 'headers', 'compression', 'timeout'] as const).flatMap((setting) => [SHARED_VARS[setting], SIGNAL_VARS.TRACES[setting]]),
  ...TLS_PARTS.flatMap((part) => otlpTlsVars('TRACES', part)),
];

/** The span export variables in effect: set, and without a problem (the default stands in for a wrong one). */
export function spanSettingsGiven(env: Env, problems: readonly Problem[]): string[] {
  return SPAN_EXPORT_ENV.filter((name) => (env[name] ?? '').trim() !== '' && !problems.some((problem) => problem.env === name));
}
