import type { Config } from '../../config.js';
import type { Logger } from '../../log.js';
import type { ProfileWindow } from '../../profiling/profiler.js';
import { authHeaders, ingestRequest, sanitizeAppName, serviceNameLabel } from './ingest-request.js';
import type { Outgoing } from '../transport/outgoing.js';
import type { EncodedProfile } from '../../profiling/window-encoder.js';

/** Turns encoded profile windows into `/ingest` uploads: one request per profile type. */
export class PyroscopeExporter {
  private readonly headers: Record<string, string>;
  private serviceName = '';

  constructor(
    private readonly config: Config,
    private readonly serverAddress: string,
    private readonly log: Logger,
  ) {
    this.headers = authHeaders(config.pyroscope);
    this.rename(config.serviceName);
  }

  rename(serviceName: string): void {
    if (serviceName === this.serviceName) return;
    this.serviceName = serviceName;
    const profileName = sanitizeAppName(serviceName);
    if (profileName !== serviceName && serviceNameLabel(serviceName) === undefined) {
      this.log.warn(`service name "${serviceName}" has characters Pyroscope does not allow; profiles are filed as "${profileName}", so Grafana's link from spans to profiles needs that name mapped`);
    }
  }

  requests(window: ProfileWindow, profiles: EncodedProfile[]): Outgoing[] {
    return profiles.map(({ type, body }) =>
      ingestRequest({
        serverAddress: this.serverAddress,
        serviceName: this.serviceName,
        labels: this.config.pyroscope.labels,
        headers: this.headers,
        from: window.from,
        until: window.until,
        body,
        what: `${type} profile of ${new Date(window.from).toISOString()}–${new Date(window.until).toISOString()}`,
      }),
    );
  }
}
