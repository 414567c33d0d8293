/**
 * What the OTel exporter spec (specification/protocol/exporter.md) and OTLP fix for every signal:
 * the protocols and compressions a variable may name, the OTLP/HTTP base URL when none is given,
 * and the path each signal's OTLP/HTTP requests go to under that base.
 */

export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json', 'grpc'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

export const OTLP_COMPRESSIONS = ['gzip', 'none'] as const;
export type OtlpCompression = (typeof OTLP_COMPRESSIONS)[number];

/** The signals pyro-run routes, as they are spelled in OTEL_EXPORTER_OTLP_<SIGNAL>_* variables. */
export type OtlpSignal = 'TRACES' | 'PROFILES' | 'METRICS' | 'LOGS';

/** The OTLP/HTTP base URL when none is given (OTel exporter spec, "Endpoint URLs for OTLP/HTTP"). */
export const OTLP_DEFAULT_BASE = 'http://localhost:4318';

/** The OTLP/HTTP signal paths (OTel exporter spec); profiles' is opentelemetry-proto's profiles/v1development, which Pyroscope serves on its HTTP port. */
export const OTLP_TRACES_PATH = '/v1/traces';
export const OTLP_METRICS_PATH = '/v1/metrics';
export const OTLP_LOGS_PATH = '/v1/logs';
export const OTLP_PROFILES_PATH = '/v1development/profiles';

/** Where OTLP profiles go when no endpoint is given: the default base URL, as for the other signals. */
export const DEFAULT_PROFILES_URL = `${OTLP_DEFAULT_BASE}${OTLP_PROFILES_PATH}`;
