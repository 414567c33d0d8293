import type { Config } from '../../config/index.js';
import type { Logger } from '../../log.js';
import type { ProfileWindow } from '../../profiling/profiler.js';
import { type EncodedProfile, encodeSync, type WireFormat } from '../../profiling/window-encoder.js';
import { GZIP_CONTENT_ENCODING, gzipSync } from '../../util/gzip.js';
import { pyroRunVersion } from '../../util/own-version.js';
import { windowText, WindowUploads } from '../window-uploads.js';
import type { FinalData } from '../destination.js';
import type { Outgoing } from '../transport/outgoing.js';
import type { Send, Upstream } from '../upstream.js';
import { piecesBySamples } from '../profile-limits.js';
import { KEPT_NOTE, keepSync, type SpoolPlace, takeKept } from '../spool.js';
import { encodeProfilesRequest, type OtlpProfilesInput } from './otlp-profiles-encode.js';

/** The body's name in logs and in the window encoder: one request holds every profile of a window. */
type Body = 'profiles';
/** The instrumentation scope of the profiles: the agent that recorded them. */
const SCOPE_NAME = 'pyro-run';

/**
 * Resource attribute keys Pyroscope sets on a series itself (pkg/ingester/otlp/ingest_handler.go):
 * one of them on the resource would make the series' labels collide, and the profile be refused.
 */
const SERIES_KEYS = new Set(['service_name', '__name__', '__delta__', '__otel__']);

export interface OtlpProfilesOptions {
  endpoint: string;
  headers: Record<string, string>;
  gzip: boolean;
  /** How long one upload may take (OTEL_EXPORTER_OTLP_(PROFILES_)TIMEOUT). */
  timeoutMs: number;
  /** Static labels (PYROSCOPE_LABELS) and OTEL_RESOURCE_ATTRIBUTES: the resource besides service.name. */
  resource: Record<string, string>;
  version: string;
  /** Where the heap profile taken at the heap limit is kept for the next start (PYRO_RUN_SPOOL_DIR). */
  spoolDir: string | undefined;
}

/**
 * Profile windows over the OTLP profiles signal (http/protobuf), to an OTel Collector or straight
 * to Pyroscope: each window one ExportProfilesServiceRequest, its samples linked to their spans.
 * Nothing goes to /ingest.
 */
export class OtlpProfilesUpstream implements Upstream {
  private readonly uploads: WindowUploads<Body>;
  private readonly format: WireFormat<Body>;
  private resource: Record<string, string> = {};

  constructor(
    private readonly options: OtlpProfilesOptions,
    serviceName: string,
    private readonly send: Send,
    private readonly log: Logger,
  ) {
    this.renameService(serviceName);
    const scope = { name: SCOPE_NAME, version: options.version };
    this.format = {
      encode: (profiles, window) => requestBodies({ profiles, from: window.from, until: window.until, resource: this.resource, scope }),
      gzip: options.gzip,
    };
    this.uploads = new WindowUploads(this.format, (window, bodies) => this.requests(window, bodies), send, log);
  }

  /** What an earlier process of this service kept for this endpoint as it died (../spool.ts), sent now. */
  sendKept(): void {
    for (const { from, until, body } of takeKept(this.spoolPlace(), this.log)) {
      // Kept as encoded, compressed as this process sends (its OTEL_EXPORTER_OTLP_COMPRESSION).
      const sent = this.options.gzip ? gzipSync(body) : body;
      for (const request of this.requests({ from, until }, [{ type: 'profiles', body: sent }], KEPT_NOTE)) this.send(request);
    }
  }

  /** The heap profile of this moment, kept on disk for the next start: the process is about to die. */
  outOfMemorySync(window: ProfileWindow): void {
    const pieces = encodeSync(window, { ...this.format, gzip: false }).map(({ body }, piece) => ({ type: `otlp-${piece}`, body }));
    keepSync(this.spoolPlace(), window, pieces, this.log);
  }

  private spoolPlace(): SpoolPlace {
    return { dir: this.options.spoolDir, server: this.options.endpoint, serviceName: this.resource['service.name']! };
  }

  prepare(): void {
    this.uploads.prepare();
  }

  profiles(window: ProfileWindow): void {
    this.uploads.profiles(window);
  }

  renameService(serviceName: string): void {
    const kept = Object.entries(this.options.resource).filter(([key]) => !SERIES_KEYS.has(key) && key !== 'service.name');
    this.resource = { 'service.name': serviceName, ...Object.fromEntries(kept) };
  }

  settle(): Promise<void> {
    return this.uploads.settle();
  }

  owedSync(last: FinalData): Outgoing[] {
    return this.uploads.owedSync(last);
  }

  private requests(window: { from: number; until: number }, bodies: EncodedProfile<Body>[], note?: string): Outgoing[] {
    const headers: Record<string, string> = { ...this.options.headers, 'content-type': 'application/x-protobuf' };
    if (this.options.gzip) headers['content-encoding'] = GZIP_CONTENT_ENCODING;
    return bodies.map(({ body }) => ({
      kind: 'profiles',
      url: this.options.endpoint,
      headers,
      body,
      timeoutMs: this.options.timeoutMs,
      what: `OTLP profiles of ${windowText(window)}${note ? ` (${note})` : ''}`,
    }));
  }
}

/** One request per window with samples; none for a window without. */
function* requestBodies(input: OtlpProfilesInput): Generator<void, EncodedProfile<Body>[]> {
  if (![...input.profiles.values()].some((profile) => profile.sample.length > 0)) return [];
  // Pyroscope's OTLP ingest checks each profile against the samples limit as its /ingest does: a
  // profile past it goes in pieces, one request per piece (each type's n-th piece together).
  const pieces = new Map([...input.profiles].map(([type, profile]) => [type, piecesBySamples(profile)]));
  const requests = Math.max(...[...pieces.values()].map((list) => list.length));
  const bodies: EncodedProfile<Body>[] = [];
  for (let i = 0; i < requests; i++) {
    const profiles = new Map([...pieces].flatMap(([type, list]) => (list[i] === undefined ? [] : [[type, list[i]!] as const])));
    bodies.push({ type: 'profiles', body: yield* encodeProfilesRequest({ ...input, profiles }) });
  }
  return bodies;
}

/** The OTLP profiles options of a config; undefined when its route does not send profiles over OTLP. */
export function otlpProfilesOptions(config: Pick<Config, 'profilesExport' | 'resourceAttributes' | 'pyroscope'>): OtlpProfilesOptions | undefined {
  const route = config.profilesExport;
  if (route.exporter !== 'otlp' || route.sender !== 'pyro-run') return undefined;
  const { endpoint, headers, gzip, timeoutMs } = route;
  const resource = { ...config.resourceAttributes, ...config.pyroscope.labels };
  return { endpoint, headers, gzip, timeoutMs, resource, version: pyroRunVersion(), spoolDir: config.pyroscope.spoolDir };
}
