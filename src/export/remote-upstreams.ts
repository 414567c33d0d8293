import { type Config, overOwnOtlp } from '../config.js';
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

/**
 * The backends the config sends to, one upstream each: a new destination is a new upstream file
 * and a line here. Profiles go over OTLP when asked (PYRO_RUN_PROFILES_EXPORTER=otlp), else to
 * Pyroscope when it has an address (none: sampled for span links only); spans, metrics and log
 * records over OTLP/HTTP go through us, while the SDK's own exporters carry grpc and console.
 */
export function remoteUpstreams(config: Config, send: Send, log: Logger): Upstream[] {
  const upstreams: Upstream[] = [];
  const { serverAddress } = config.pyroscope;
  const otlpProfiles = otlpProfilesOptions(config);
  if (otlpProfiles) upstreams.push(new OtlpProfilesUpstream(otlpProfiles, config.serviceName, send, log));
  else if (serverAddress && config.profilesExport.exporter === 'pyroscope') upstreams.push(new PyroscopeUpstream({ ...config.pyroscope, serverAddress }, config.serviceName, send, log));
  if (ownsSpanExport(config)) upstreams.push(new OtlpTracesUpstream(config.traces, send, log));
  const metrics = ownMetricsExport(config);
  if (metrics) upstreams.push(new OtlpMetricsUpstream(metrics, send, log));
  const logs = ownLogsExport(config);
  if (logs) upstreams.push(new OtlpLogsUpstream(logs, send, log));
  return upstreams;
}

/**
 * Log records over OTLP/HTTP are ours to send in remote mode, so that the final flush takes them
 * at `process.exit()` as it takes spans; grpc and console are the NodeSDK's exporters', and so is
 * everything in local mode, which records no logs.
 */
export function ownLogsExport(config: Config): SignalEndpoint | undefined {
  return ownSignal(config, config.logs);
}

/** Metrics over OTLP/HTTP are ours to send in remote mode, as log records are (ownLogsExport); prometheus and console are the NodeSDK's readers'. */
export function ownMetricsExport(config: Config): SignalEndpoint | undefined {
  return ownSignal(config, config.metrics);
}

function ownSignal(config: Config, signal: Config['metrics'] | Config['logs']): SignalEndpoint | undefined {
  if (config.local !== undefined || !overOwnOtlp(signal) || signal.endpoint === undefined) return undefined;
  return { ...signal, endpoint: signal.endpoint };
}

/** Spans over OTLP/HTTP are ours to send; grpc and console are the SDK's exporters'. */
const ownsSpanExport = (config: Config) => overOwnOtlp(config.traces);

/** The OTLP endpoints we send to, with the TLS files the config names for each (the SDK's grpc exporter reads its own). */
export function otlpTlsEndpoints(config: Config): EndpointTls[] {
  const endpoints: EndpointTls[] = [];
  if (ownsSpanExport(config)) endpoints.push({ url: config.traces.endpoint ?? DEFAULT_TRACES_URL, files: config.traces.tls });
  const profiles = otlpProfilesOptions(config);
  if (profiles) endpoints.push({ url: profiles.endpoint, files: config.profilesExport.tls });
  for (const signal of [ownMetricsExport(config), ownLogsExport(config)]) if (signal) endpoints.push({ url: signal.endpoint, files: signal.tls });
  return endpoints;
}
