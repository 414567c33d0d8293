import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { OtlpProfilesUpstream, otlpProfilesOptions } from './otlp/otlp-profiles-upstream.js';
import { OtlpTracesUpstream } from './otlp/otlp-traces-upstream.js';
import { PyroscopeUpstream } from './pyroscope/pyroscope-upstream.js';
import type { Send, Upstream } from './upstream.js';

/**
 * The backends the config sends to, one upstream each: a new destination is a new upstream file
 * and a line here. Profiles go over OTLP when asked (PYRO_RUN_PROFILES_EXPORTER=otlp), else to
 * Pyroscope when it has an address (none: sampled for span links only); spans over OTLP/HTTP go
 * through us, while the SDK's own exporters carry grpc and console.
 */
export function remoteUpstreams(config: Config, send: Send, log: Logger): Upstream[] {
  const upstreams: Upstream[] = [];
  const { serverAddress } = config.pyroscope;
  const otlpProfiles = otlpProfilesOptions(config);
  if (otlpProfiles) upstreams.push(new OtlpProfilesUpstream(otlpProfiles, config.serviceName, send, log));
  else if (serverAddress && config.profilesExport.exporter === 'pyroscope') upstreams.push(new PyroscopeUpstream({ ...config.pyroscope, serverAddress }, config.serviceName, send, log));
  if (config.traces.exporter === 'otlp' && config.traces.protocol !== 'grpc') upstreams.push(new OtlpTracesUpstream(config.traces, send, log));
  return upstreams;
}
