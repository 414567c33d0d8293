import { type Logger, reason } from '../log.js';
import type { ProfileWindow } from '../profiling/profiler.js';
import { type EncodedProfile, encodeSync, prepareEncoder, WindowEncoder, type WireFormat } from '../profiling/window-encoder.js';
import type { FinalData } from './destination.js';
import type { Outgoing } from './transport/outgoing.js';
import type { Send } from './upstream.js';

/** A window's bounds as an upload names them in logs and warnings. */
export function windowText(window: { from: number; until: number }): string {
  return `${new Date(window.from).toISOString()}–${new Date(window.until).toISOString()}`;
}

/**
 * The part of an upstream that turns profile windows into requests: each window encoded in its
 * wire format off the hot path, then made requests and sent; at exit, what is still encoding,
 * and the last window, encoded synchronously. Pyroscope's /ingest and OTLP profiles share it.
 */
export class WindowUploads<K extends string> {
  private readonly encoder: WindowEncoder<K>;

  constructor(
    private readonly format: WireFormat<K>,
    private readonly toRequests: (window: ProfileWindow, bodies: EncodedProfile<K>[]) => Outgoing[],
    private readonly send: Send,
    private readonly log: Logger,
  ) {
    this.encoder = new WindowEncoder(log, format);
  }

  /** The encoding path run once, at start-up (the uploads' warm-up). */
  prepare(): void {
    prepareEncoder(this.format);
  }

  profiles(window: ProfileWindow): void {
    this.encoder.encode(
      window,
      (encoded, bodies) => this.toRequests(encoded, bodies).forEach(this.send),
      (error) => this.log.warnOnce('encode', `could not encode a profile window: ${reason(error)}`),
    );
  }

  settle(): Promise<void> {
    return this.encoder.settle();
  }

  /** Windows still encoding would never finish now: they are encoded here, then the last one. */
  owedSync(last: FinalData): Outgoing[] {
    const windows = this.encoder.takePendingSync();
    if (last.window) windows.push([last.window, encodeSync(last.window, this.format)]);
    return windows.flatMap(([window, bodies]) => this.toRequests(window, bodies));
  }
}
