import type { Config } from '../config/index.js';
import type { Logger } from '../log.js';
import { OtlpProfilesUpstream, otlpProfilesOptions } from './otlp/otlp-profiles-upstream.js';
import { OtlpLogsUpstream } from './otlp/otlp-logs-upstream.js';
import { OtlpMetricsUpstream } from './otlp/otlp-metrics-upstream.js';
import type { SignalEndpoint } from './otlp/otlp-signal-upstream.js';
import { DEFAULT_TRACES_URL } from './otlp/otlp-request.js';
import { OtlpTracesUpstream } from './otlp/otlp-traces-upstream.js';
import { PyroscopeUpstream } from './pyroscope/pyroscope-upstream.js';
import type { EndpointTls } from './transport/origin-tls.js';
import type { Send, Upstream } from './upstream.js';

/** The slice of the config the remote upstreams are built from: each signal's decided route and what the upstreams send with it. */
export type RemoteConfig = Pick<Config, 'serviceName' | 'pyroscope' | 'resourceAttributes' | 'profilesExport' | 'traces' | 'metrics' | 'logs'>;

/**
 * The backends the config sends to, one upstream each: a new destination is a new upstream file
 * and a line here. Each signal whose route says pyro-run sends it gets its upstream: profiles to
 * Pyroscope's /ingest or over OTLP (PYRO_RUN_PROFILES_EXPORTER), spans, metrics and log records
 * over OTLP/HTTP; what the SDK's own exporters send (grpc, console, prometheus) needs none.
 */
export function remoteUpstreams(config: RemoteConfig, send: Send, log: Logger): Upstream[] {
  const upstreams: Upstream[] = [];
  const { serverAddress } = config.pyroscope;
  const otlpProfiles = otlpProfilesOptions(config);
  if (otlpProfiles) upstreams.push(new OtlpProfilesUpstream(otlpProfiles, config.serviceName, send, log));
  // The address is set whenever profiles to Pyroscope are ours to send: checked for its type.
  else if (config.profilesExport.sender === 'pyro-run' && serverAddress !== undefined)
    upstreams.push(new PyroscopeUpstream({ ...config.pyroscope, serverAddress }, config.serviceName, send, log));
  if (config.traces.sender === 'pyro-run') upstreams.push(new OtlpTracesUpstream(config.traces, send, log));
  const metrics = ownMetricsExport(config);
  if (metrics) upstreams.push(new OtlpMetricsUpstream(metrics, send, log));
  const logs = ownLogsExport(config);
  if (logs) upstreams.push(new OtlpLogsUpstream(logs, send, log));
  return upstreams;
}

/** Log records, when their route says pyro-run sends them (OTLP/HTTP in remote mode): the final flush then takes them at `process.exit()` as it takes spans. */
export function ownLogsExport({ logs }: Pick<Config, 'logs'>): SignalEndpoint | undefined {
  return logs.sender === 'pyro-run' ? logs : undefined;
}

/** Metrics, when their route says pyro-run sends them, as log records (ownLogsExport). */
export function ownMetricsExport({ metrics }: Pick<Config, 'metrics'>): SignalEndpoint | undefined {
  return metrics.sender === 'pyro-run' ? metrics : undefined;
}

/** The OTLP endpoints we send to, with the TLS files the config names for each (the SDK's grpc exporter reads its own). */
export function otlpTlsEndpoints(config: RemoteConfig): EndpointTls[] {
  const endpoints: EndpointTls[] = [];
  if (config.traces.sender === 'pyro-run') endpoints.push({ url: config.traces.endpoint ?? DEFAULT_TRACES_URL, files: config.traces.tls });
  const profiles = otlpProfilesOptions(config);
  if (profiles) endpoints.push({ url: profiles.endpoint, files: config.profilesExport.tls });
  for (const signal of [ownMetricsExport(config), ownLogsExport(config)]) if (signal) endpoints.push({ url: signal.endpoint, files: signal.tls });
  return endpoints;
}
