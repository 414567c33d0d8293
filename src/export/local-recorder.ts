import path from 'node:path';
import { nodeFs } from '../builtins.js';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Config } from '../config.js';
import { type Logger, reason } from '../log.js';
import type { ProfileWindow } from '../profiler.js';
import {
  MANIFEST_FILE,
  type Manifest,
  PROFILES_DIR,
  profileFileName,
  RECORDING_FORMAT,
  RECORDING_FORMAT_VERSION,
  runFolderName,
  SPANS_DIR,
  spanFileName,
} from '../recording.js';
import { otlpJsonTraceSerializer } from '../vendor.js';
import { writeFileAtomicSync } from './atomic-file.js';
import type { Destination, FinalData } from './destination.js';
import { type EncodedProfile, encodeSync, WindowEncoder } from './window-encoder.js';


export interface RecorderMeta {
  pyroRunVersion: string;
  command: string[];
  startedAt: Date;
}

/**
 * Local mode's destination: each profile window as gzipped pprof files and each span batch as an
 * OTLP/JSON line, under one folder per run, with a manifest rewritten after every write. Every
 * file is written atomically, so a reader — or a SIGKILL at any instant — sees whole files only.
 * Disk use is capped per run: the oldest profile windows are deleted to make room, and counted.
 * A write error (disk full, no permission) stops the recording with one warning; the app goes on.
 */
export class LocalRecorder implements Destination {
  readonly dir: string;
  private readonly manifest: Manifest;
  private readonly encoder: WindowEncoder;
  private readonly serialize: (spans: ReadableSpan[]) => Uint8Array | undefined;
  /** Profile windows on disk, oldest first, for the cap. */
  private readonly windowsOnDisk: { files: string[]; bytes: number }[] = [];
  private windowSeq = 0;
  private spanSeq = 0;
  private broken = false;
  private closed = false;

  constructor(
    config: Config,
    baseDir: string,
    private readonly log: Logger,
    meta: RecorderMeta,
    private readonly onClosed: (dir: string, manifest: Manifest) => void = () => undefined,
  ) {
    this.encoder = new WindowEncoder(log);
    this.dir = path.join(baseDir, runFolderName(config.serviceName, meta.startedAt, process.pid));
    this.manifest = {
      format: RECORDING_FORMAT,
      formatVersion: RECORDING_FORMAT_VERSION,
      service: config.serviceName,
      pyroRunVersion: meta.pyroRunVersion,
      nodeVersion: process.versions.node,
      pid: process.pid,
      command: meta.command,
      startedAt: meta.startedAt.toISOString(),
      endedAt: null,
      complete: false,
      samplingIntervalMicros: config.samplingIntervalMicros,
      flushIntervalMs: config.flushIntervalMs,
      profileTypes: config.profiles,
      capBytes: config.local?.capBytes ?? 0,
      counts: { windows: 0, profileFiles: 0, spanFiles: 0, spans: 0, bytes: 0, droppedWindows: 0, droppedSpans: 0 },
    };
    // Loaded with the first batch, not at start.
    this.serialize = (spans) => otlpJsonTraceSerializer().serializeRequest(spans);
    nodeFs().mkdirSync(path.join(this.dir, PROFILES_DIR), { recursive: true });
    nodeFs().mkdirSync(path.join(this.dir, SPANS_DIR), { recursive: true });
    this.writeManifest();
  }

  profiles(window: ProfileWindow): void {
    if (this.broken || this.closed) return;
    this.encoder.encode(
      window,
      (encoded, profiles) => this.guard(() => this.writeWindow(encoded, profiles)),
      (error) => this.log.warnOnce('encode', `could not encode a profile window: ${reason(error)}`),
    );
  }

  /** The run keeps its folder name; the manifest, which the report reads, names the service. */
  renameService(name: string): void {
    if (this.broken || this.closed || name === this.manifest.service) return;
    this.manifest.service = name;
    this.guard(() => this.writeManifest());
  }

  spans(batch: ReadableSpan[]): void {
    if (this.broken || this.closed) return;
    this.guard(() => this.writeSpans(batch));
  }

  async finishAsync(last: FinalData, deadlineAt: number): Promise<void> {
    await this.encoder.settle();
    this.finishSync(last, deadlineAt);
  }

  finishSync(last: FinalData, _deadlineAt?: number): void {
    if (this.closed) return;
    this.guard(() => {
      const windows = this.encoder.takePendingSync();
      if (last.window) windows.push([last.window, encodeSync(last.window)]);
      for (const [window, profiles] of windows) this.writeWindow(window, profiles);
      for (const batch of last.spanBatches) this.writeSpans(batch);
      this.manifest.endedAt = new Date().toISOString();
      this.manifest.complete = true;
      this.writeManifest();
    });
    this.closed = true;
    if (!this.broken) this.onClosed(this.dir, this.manifest);
  }

  private writeWindow(window: ProfileWindow, profiles: EncodedProfile[]): void {
    if (profiles.length === 0) return;
    const seq = ++this.windowSeq;
    const bytes = profiles.reduce((sum, p) => sum + p.body.byteLength, 0);
    if (!this.makeRoom(bytes)) {
      this.manifest.counts.droppedWindows++;
      this.log.warnOnce('cap-window-too-big', `a profile window (${bytes} bytes) is larger than the recording's ${this.capMb()} MB cap; it is not recorded (counted in run.json)`);
      this.writeManifest();
      return;
    }
    const files: string[] = [];
    for (const { type, body } of profiles) {
      const file = path.join(this.dir, PROFILES_DIR, profileFileName(seq, type));
      writeFileAtomicSync(file, body);
      files.push(file);
    }
    this.windowsOnDisk.push({ files, bytes });
    const { counts } = this.manifest;
    counts.windows++;
    counts.profileFiles += files.length;
    counts.bytes += bytes;
    this.writeManifest();
  }

  private writeSpans(batch: ReadableSpan[]): void {
    const body = this.serialize(batch);
    if (body === undefined || batch.length === 0) return;
    const { counts } = this.manifest;
    if (!this.makeRoom(body.byteLength + 1)) {
      counts.droppedSpans += batch.length;
      this.log.warnOnce('cap-spans', `the recording reached its ${this.capMb()} MB cap; spans beyond it are not recorded (counted in run.json)`);
      this.writeManifest();
      return;
    }
    writeFileAtomicSync(path.join(this.dir, SPANS_DIR, spanFileName(++this.spanSeq)), Buffer.concat([body, Buffer.from('\n')]));
    counts.spanFiles++;
    counts.spans += batch.length;
    counts.bytes += body.byteLength + 1;
    this.writeManifest();
  }

  /** Deletes the oldest profile windows until `bytes` more fit under the cap; false if they cannot. */
  private makeRoom(bytes: number): boolean {
    const { counts, capBytes } = this.manifest;
    while (counts.bytes + bytes > capBytes && this.windowsOnDisk.length > 0) {
      const oldest = this.windowsOnDisk.shift()!;
      for (const file of oldest.files) nodeFs().unlinkSync(file);
      counts.bytes -= oldest.bytes;
      counts.profileFiles -= oldest.files.length;
      counts.droppedWindows++;
      this.log.warnOnce('cap-windows', `the recording reached its ${this.capMb()} MB cap; the oldest profile windows are deleted to make room (counted in run.json)`);
    }
    return counts.bytes + bytes <= capBytes;
  }

  private capMb(): number {
    return Math.round((this.manifest.capBytes / (1024 * 1024)) * 100) / 100;
  }

  private writeManifest(): void {
    writeFileAtomicSync(path.join(this.dir, MANIFEST_FILE), `${JSON.stringify(this.manifest, null, 2)}\n`);
  }

  private guard(write: () => void): void {
    if (this.broken) return;
    try {
      write();
    } catch (error) {
      this.broken = true;
      this.log.warn(`cannot write the recording in ${this.dir}: ${reason(error)}; recording stopped, the app is not affected`);
    }
  }
}
