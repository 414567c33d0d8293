import { gzip, gzipSync } from 'node:zlib';
import { promisify } from 'node:util';
import type { Config, ProfileType } from '../config.js';
import type { ProfileWindow } from '../profiler.js';
import type { Logger } from '../log.js';
import { authHeaders, ingestRequest, sanitizeAppName } from './ingest-request.js';
import type { Outgoing } from './outgoing.js';

const gzipAsync = promisify(gzip);

/** Turns profile windows into `/ingest` uploads: one gzipped pprof per profile type. */
export class PyroscopeExporter {
  private readonly headers: Record<string, string>;

  constructor(
    private readonly config: Config,
    private readonly serverAddress: string,
    log: Logger,
  ) {
    this.headers = authHeaders(config.pyroscope);
    const profileName = sanitizeAppName(config.serviceName);
    if (profileName !== config.serviceName) {
      log.warn(`service name "${config.serviceName}" has characters Pyroscope does not allow; profiles are filed as "${profileName}", so Grafana's link from spans to profiles needs that name mapped`);
    }
  }

  /** Steady state: encodes off the hot path (async gzip) and returns the requests. */
  async requests(window: ProfileWindow): Promise<Outgoing[]> {
    const out: Outgoing[] = [];
    for (const [type, profile] of window.profiles) {
      if (profile.sample.length === 0) continue;
      out.push(this.request(window, type, await gzipAsync(await profile.encodeAsync())));
    }
    return out;
  }

  /** At exit, where no event-loop turn is left: the same, synchronously. */
  requestsSync(window: ProfileWindow): Outgoing[] {
    const out: Outgoing[] = [];
    for (const [type, profile] of window.profiles) {
      if (profile.sample.length === 0) continue;
      out.push(this.request(window, type, gzipSync(profile.encode())));
    }
    return out;
  }

  private request(window: ProfileWindow, type: ProfileType, body: Uint8Array): Outgoing {
    return ingestRequest({
      serverAddress: this.serverAddress,
      serviceName: this.config.serviceName,
      labels: this.config.pyroscope.labels,
      headers: this.headers,
      from: window.from,
      until: window.until,
      body,
      what: `${type} profile of ${new Date(window.from).toISOString()}–${new Date(window.until).toISOString()}`,
    });
  }
}
