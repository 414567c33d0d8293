import path from 'node:path';
import { nodeFs } from '../builtins.js';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { type Config, megabytes } from '../config.js';
import { type Logger, reason } from '../log.js';
import type { ProfileWindow } from '../profiler.js';
import {
  MANIFEST_FILE,
  type Manifest,
  PROFILES_DIR,
  profileFileName,
  RECORDING_FORMAT,
  RECORDING_FORMAT_VERSION,
  RUN_HEARTBEAT_MS,
  SPANS_DIR,
  spanFileName,
} from '../recording.js';
import { otlpJsonTraceSerializer } from '../vendor.js';
import { removeQuietly, writeFileAtomicSync } from './atomic-file.js';
import type { Destination, FinalData } from './destination.js';
import { describeDiskError, isDiskFull } from './disk-error.js';
import { createRunFolder } from './run-folder.js';
import { pidNamespace } from './run-liveness.js';
import { TotalCap } from './run-retention.js';
import { type EncodedProfile, encodeSync, WindowEncoder } from './window-encoder.js';

/** After a full disk, how long windows and spans are dropped (counted) before writing is tried again. */
const DISK_FULL_PAUSE_MS = 30_000;

export interface RecorderMeta {
  pyroRunVersion: string;
  command: string[];
  startedAt: Date;
}

/**
 * Local mode's destination: each profile window as gzipped pprof files and each span batch as an
 * OTLP/JSON line, under one folder per run, with a manifest rewritten after every write. Every
 * file is written atomically, so a reader — or a SIGKILL at any instant — sees whole files only.
 * Disk use is capped per run and for the whole output folder (TotalCap): older finished runs
 * are deleted first, then this run's oldest profile windows, counted. A full disk drops what
 * comes (counted) for DISK_FULL_PAUSE_MS, then writing is tried again; any other write error
 * (no permission, a read-only file system) stops the recording. Either says so once; the app
 * goes on.
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
  /** Size of run.json as last written: it is part of what the run holds on disk. */
  private manifestBytes = 0;
  private readonly total: TotalCap;
  private readonly heartbeat: NodeJS.Timeout;
  /** Until when writes are dropped after a full disk; 0 when they are not. */
  private diskFullUntil = 0;
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
    this.dir = createRunFolder(baseDir, config.serviceName, meta.startedAt, process.pid);
    this.manifest = {
      format: RECORDING_FORMAT,
      formatVersion: RECORDING_FORMAT_VERSION,
      service: config.serviceName,
      pyroRunVersion: meta.pyroRunVersion,
      nodeVersion: process.versions.node,
      pid: process.pid,
      pidNamespace: pidNamespace(),
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
    try {
      this.writeManifest();
    } catch (error) {
      // A folder without run.json is no recording: nothing would ever clean it up.
      removeQuietly(this.dir);
      throw error;
    }
    this.total = new TotalCap(baseDir, path.basename(this.dir), config.local?.totalCapBytes ?? Number.POSITIVE_INFINITY, log);
    this.total.room(this.ownBytes());
    // Tells other processes this run is alive when there is nothing to write (see isRunning).
    this.heartbeat = setInterval(() => this.touchManifest(), RUN_HEARTBEAT_MS).unref();
  }

  profiles(window: ProfileWindow): void {
    if (this.broken || this.closed) return;
    if (this.diskFull()) {
      this.manifest.counts.droppedWindows++;
      return;
    }
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
    if (this.diskFull()) {
      this.manifest.counts.droppedSpans += batch.length;
      return;
    }
    this.guard(() => this.writeSpans(batch));
  }

  async finishAsync(last: FinalData, deadlineAt: number): Promise<void> {
    await this.encoder.settle();
    this.finishSync(last, deadlineAt);
  }

  finishSync(last: FinalData, _deadlineAt?: number): void {
    if (this.closed) return;
    clearInterval(this.heartbeat);
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
    // After the last writes, which may have deleted older runs too.
    this.total.settle();
    if (!this.broken) this.onClosed(this.dir, this.manifest);
  }

  private writeWindow(window: ProfileWindow, profiles: EncodedProfile[]): void {
    if (profiles.length === 0) return;
    const seq = ++this.windowSeq;
    const bytes = profiles.reduce((sum, p) => sum + p.body.byteLength, 0);
    const room = this.makeRoom(bytes);
    if (room !== true) {
      this.manifest.counts.droppedWindows++;
      this.log.warnOnce('cap-window-too-big', `a profile window (${bytes} bytes) is larger than the room left under ${room}; it is not recorded (counted in run.json)`);
      this.writeManifest();
      return;
    }
    const files: string[] = [];
    try {
      for (const { type, body } of profiles) {
        const file = path.join(this.dir, PROFILES_DIR, profileFileName(seq, type));
        writeFileAtomicSync(file, body);
        files.push(file);
      }
    } catch (error) {
      // A window is on disk whole or not at all: its cpu file without its wall file would be counted by no one.
      for (const file of files) removeQuietly(file);
      this.manifest.counts.droppedWindows++;
      throw error;
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
    const room = this.makeRoom(body.byteLength + 1);
    if (room !== true) {
      counts.droppedSpans += batch.length;
      this.log.warnOnce('cap-spans', `the recording reached ${room}; spans beyond it are not recorded (counted in run.json)`);
      this.writeManifest();
      return;
    }
    try {
      writeFileAtomicSync(path.join(this.dir, SPANS_DIR, spanFileName(++this.spanSeq)), Buffer.concat([body, Buffer.from('\n')]));
    } catch (error) {
      counts.droppedSpans += batch.length;
      throw error;
    }
    counts.spanFiles++;
    counts.spans += batch.length;
    counts.bytes += body.byteLength + 1;
    this.writeManifest();
  }

  /**
   * Makes room for `bytes` more: first under the output folder's total cap (older finished runs
   * go), then under this run's cap, deleting this run's oldest profile windows. True when they
   * fit; else the cap that stops them, in words.
   */
  private makeRoom(bytes: number): true | string {
    const { counts, capBytes } = this.manifest;
    const totalRoom = this.total.room(this.ownBytes() + bytes) - this.manifestBytes;
    const byTotal = totalRoom < capBytes;
    const cap = byTotal ? totalRoom : capBytes;
    const capText = byTotal
      ? `the ${megabytes(this.total.capBytes)} total cap of the recordings in ${path.dirname(this.dir)} (--max-total-size), which other runs still recording take their share of`
      : `its ${megabytes(capBytes)} cap`;
    while (counts.bytes + bytes > cap && this.windowsOnDisk.length > 0) {
      const oldest = this.windowsOnDisk.shift()!;
      for (const file of oldest.files) nodeFs().unlinkSync(file);
      counts.bytes -= oldest.bytes;
      counts.profileFiles -= oldest.files.length;
      counts.droppedWindows++;
      this.log.warnOnce(byTotal ? 'total-cap-windows' : 'cap-windows', `the recording reached ${capText}; the oldest profile windows are deleted to make room (counted in run.json)`);
    }
    return counts.bytes + bytes <= cap || capText;
  }

  /** What this run holds on disk. */
  private ownBytes(): number {
    return this.manifest.counts.bytes + this.manifestBytes;
  }

  private writeManifest(): void {
    const text = `${JSON.stringify(this.manifest, null, 2)}\n`;
    writeFileAtomicSync(path.join(this.dir, MANIFEST_FILE), text);
    this.manifestBytes = Buffer.byteLength(text);
  }

  private touchManifest(): void {
    if (this.broken || this.closed) return;
    try {
      const now = new Date();
      nodeFs().utimesSync(path.join(this.dir, MANIFEST_FILE), now, now);
    } catch (error) {
      this.log.debug(`could not touch ${this.dir}'s run.json: ${reason(error)}`);
    }
  }

  /** Whether writes are being dropped after a full disk; the first write after the pause tries again. */
  private diskFull(): boolean {
    return this.diskFullUntil !== 0 && Date.now() < this.diskFullUntil;
  }

  private guard(write: () => void): void {
    if (this.broken) return;
    try {
      write();
      if (this.diskFullUntil !== 0) {
        this.diskFullUntil = 0;
        this.log.clear('disk-full');
        this.log.info(`there is room on the disk again: recording into ${this.dir} goes on (what was dropped meanwhile is counted in run.json)`);
      }
    } catch (error) {
      if (isDiskFull(error)) {
        this.diskFullUntil = Date.now() + DISK_FULL_PAUSE_MS;
        this.log.warnOnce(
          'disk-full',
          `${describeDiskError(error, this.dir)}: profile windows and spans are dropped (counted in run.json) and writing is tried again every ${DISK_FULL_PAUSE_MS / 1000} s; no partial file is left; the app is not affected`,
        );
        return;
      }
      this.broken = true;
      this.log.warn(`cannot write the recording in ${this.dir}: ${describeDiskError(error, this.dir)}; recording stopped, the app is not affected`);
    }
  }
}
