import type { Config } from '../../config.js';
import { type Logger, reason } from '../../log.js';
import type { ProfileWindow } from '../../profiling/profiler.js';
import { encodeSync, type EncodedProfile, prepareEncoder, WindowEncoder } from '../../profiling/window-encoder.js';
import type { FinalData } from '../destination.js';
import type { Outgoing } from '../transport/outgoing.js';
import type { Send, Upstream } from '../upstream.js';
import { authHeaders, ingestRequest, sanitizeAppName, serviceNameLabel } from './ingest-request.js';

/** Profile windows to Pyroscope's `/ingest`: each window's profiles as gzipped pprof, one request per profile type. */
export class PyroscopeUpstream implements Upstream {
  private readonly headers: Record<string, string>;
  private readonly encoder: WindowEncoder;
  private serviceName = '';

  constructor(
    private readonly pyroscope: Config['pyroscope'] & { serverAddress: string },
    serviceName: string,
    private readonly send: Send,
    private readonly log: Logger,
  ) {
    this.headers = authHeaders(pyroscope);
    this.encoder = new WindowEncoder(log);
    this.renameService(serviceName);
  }

  prepare(): void {
    prepareEncoder();
  }

  profiles(window: ProfileWindow): void {
    this.encoder.encode(
      window,
      (encoded, profiles) => this.requests(encoded, profiles).forEach(this.send),
      (error) => this.log.warnOnce('encode', `could not encode a profile window: ${reason(error)}`),
    );
  }

  renameService(serviceName: string): void {
    if (serviceName === this.serviceName) return;
    this.serviceName = serviceName;
    const profileName = sanitizeAppName(serviceName);
    if (profileName !== serviceName && serviceNameLabel(serviceName) === undefined) {
      this.log.warn(`service name "${serviceName}" has characters Pyroscope does not allow; profiles are filed as "${profileName}", so Grafana's link from spans to profiles needs that name mapped`);
    }
  }

  settle(): Promise<void> {
    return this.encoder.settle();
  }

  /** Windows still encoding would never finish now: they are encoded here, then the last one. */
  owedSync(last: FinalData): Outgoing[] {
    const windows = this.encoder.takePendingSync();
    if (last.window) windows.push([last.window, encodeSync(last.window)]);
    return windows.flatMap(([window, profiles]) => this.requests(window, profiles));
  }

  private requests(window: ProfileWindow, profiles: EncodedProfile[]): Outgoing[] {
    return profiles.map(({ type, body }) =>
      ingestRequest({
        serverAddress: this.pyroscope.serverAddress,
        serviceName: this.serviceName,
        labels: this.pyroscope.labels,
        headers: this.headers,
        from: window.from,
        until: window.until,
        body,
        what: `${type} profile of ${new Date(window.from).toISOString()}–${new Date(window.until).toISOString()}`,
      }),
    );
  }
}
