import type { Config } from '../../config/index.js';
import type { Logger } from '../../log.js';
import type { ProfileWindow } from '../../profiling/profiler.js';
import type { ProfileType } from '../../profiling/profile-types.js';
import { encodeSync, type EncodedProfile, PPROF, type WireFormat } from '../../profiling/window-encoder.js';
import { windowText, WindowUploads } from '../window-uploads.js';
import type { FinalData } from '../destination.js';
import type { Outgoing } from '../transport/outgoing.js';
import type { Send, Upstream } from '../upstream.js';
import { encodeWithinLimits, MAX_PROFILE_BYTES, MAX_PROFILE_SAMPLES } from '../profile-limits.js';
import { KEPT_NOTE, keepSync, type SpoolPlace, takeKept } from '../spool.js';
import { authHeaders, ingestRequest, sanitizeAppName, serviceNameLabel } from './ingest-request.js';

/**
 * Gzipped pprof, as PPROF, but a profile past Pyroscope's size or samples limit goes as several
 * that each fit (../profile-limits.ts): one request per piece.
 */
function ingestPprof(log: Logger): WireFormat<ProfileType> {
  return {
    *encode(profiles, window) {
      const out: EncodedProfile[] = [];
      for (const [type, profile] of profiles) {
        if (profile.sample.length === 0) continue;
        const { pieces, droppedSamples } = yield* encodeWithinLimits(profile);
        if (pieces.length > 1)
          log.debug(
            `${type} profile of ${windowText(window)}: ${profile.sample.length} samples, sent as ${pieces.length} profiles within Pyroscope's limits (${MAX_PROFILE_SAMPLES} samples, ${MAX_PROFILE_BYTES} bytes)`,
          );
        if (droppedSamples > 0)
          log.warnOnce(
            'ingest-limits',
            `${droppedSamples} samples of a ${type} profile were each bigger than Pyroscope's ${MAX_PROFILE_BYTES} bytes on their own, and were left out`,
          );
        for (const body of pieces) out.push({ type, body });
      }
      return out;
    },
    gzip: true,
  };
}

/** Profile windows to Pyroscope's `/ingest`: each window's profiles as gzipped pprof, one request per profile type (or per piece of one past the limits). */
export class PyroscopeUpstream implements Upstream {
  private readonly headers: Record<string, string>;
  private readonly uploads: WindowUploads<ProfileType>;
  private serviceName = '';

  constructor(
    private readonly pyroscope: Config['pyroscope'] & { serverAddress: string },
    serviceName: string,
    private readonly send: Send,
    private readonly log: Logger,
  ) {
    this.headers = authHeaders(pyroscope);
    this.uploads = new WindowUploads(ingestPprof(log), (window, profiles) => this.requests(window, profiles), send, log);
    this.renameService(serviceName);
  }

  prepare(): void {
    this.uploads.prepare();
  }

  /** What an earlier process of this service kept for this server as it died (../spool.ts), sent now. */
  sendKept(): void {
    for (const { from, until, type, body } of takeKept(this.spoolPlace(), this.log)) this.send(this.request({ from, until }, type, body, KEPT_NOTE));
  }

  outOfMemorySync(window: ProfileWindow): void {
    keepSync(this.spoolPlace(), window, encodeSync(window, PPROF), this.log);
  }

  private spoolPlace(): SpoolPlace {
    return { dir: this.pyroscope.spoolDir, server: this.pyroscope.serverAddress, serviceName: this.serviceName };
  }

  profiles(window: ProfileWindow): void {
    this.uploads.profiles(window);
  }

  renameService(serviceName: string): void {
    if (serviceName === this.serviceName) return;
    this.serviceName = serviceName;
    const profileName = sanitizeAppName(serviceName);
    if (profileName !== serviceName && serviceNameLabel(serviceName) === undefined) {
      this.log.warn(
        `service name "${serviceName}" has characters Pyroscope does not allow; profiles are filed as "${profileName}", so Grafana's link from spans to profiles needs that name mapped`,
      );
    }
  }

  settle(): Promise<void> {
    return this.uploads.settle();
  }

  owedSync(last: FinalData): Outgoing[] {
    return this.uploads.owedSync(last);
  }

  private requests(window: ProfileWindow, profiles: EncodedProfile[]): Outgoing[] {
    return profiles.map(({ type, body }) => this.request(window, type, body));
  }

  private request(window: { from: number; until: number }, type: string, body: Uint8Array, note?: string): Outgoing {
    return ingestRequest({
      serverAddress: this.pyroscope.serverAddress,
      serviceName: this.serviceName,
      labels: this.pyroscope.labels,
      headers: this.headers,
      from: window.from,
      until: window.until,
      body,
      what: `${type} profile of ${windowText(window)}${note ? ` (${note})` : ''}`,
    });
  }
}
