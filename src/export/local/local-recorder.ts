import path from 'node:path';
import { AGENT_DIR } from '../../util/agent-dir.js';
import { nodeFs } from '../../util/builtins.js';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { type Config, megabytes, type ProfileType } from '../../config/index.js';
import { type Logger, reason } from '../../log.js';
import type { ProfileWindow } from '../../profiling/profiler.js';
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
} from '../../recording.js';
import { otlpJsonTraceSerializer } from '../../vendor.js';
import { LABEL_SPAN_ID, LABEL_TRACE_ID } from '../../wire.js';
import { removeQuietly, writeFileAtomicSync } from '../../util/atomic-file.js';
import type { Destination, FinalData } from '../destination.js';
import { describeDiskError, isDiskFull } from './disk-error.js';
import { mergeGzippedProfiles } from '../../profiling/profile-merge.js';
import { createRunFolder } from './run-folder.js';
import { SpanKeeper } from './span-keeping.js';
import { pidNamespace } from './run-liveness.js';
import { TotalCap } from './run-retention.js';
import { type EncodedProfile, encodeSync, PPROF, WindowEncoder } from '../../profiling/window-encoder.js';

/** After a full disk, how long windows and spans are dropped (counted) before writing is tried again. */
const DISK_FULL_PAUSE_MS = 30_000;
/**
 * The part of the run's cap span files may take: the rest is the profiles', which spans never
 * evict (the report is for the flame graphs; spans are counted into the endpoint totals anyway).
 */
const SPAN_SHARE_OF_CAP = 0.5;
/** Kept spans are written together: at most one span file (and one run.json) per this long (the first batch at once)... */
const WRITE_EVERY_MS = 1000;
/** ...unless this many spans wait. */
const SPANS_PER_FILE = 4096;
/**
 * Spans per line of a span file (one OTLP/JSON request each, as the collector's file exporter
 * writes them): a reader takes a file line by line, and the final flush's file can hold a whole
 * run's late spans.
 */
const SPANS_PER_LINE = 512;
const NEWLINE = Buffer.from('\n');
/**
 * run.json grows between the writes that make room (counts gain digits, endpoints and their
 * histogram buckets appear): room is made for it as it is now plus this much.
 */
export const MANIFEST_GROWTH = 2048;
/** How long the span IDs of a written window's samples are looked up for summarised roots that reach the recorder late. */
const SAMPLED_IDS_KEPT_MS = 60_000;
/** Less room than this left in the spans' share: no span file fits, none is tried. */
const MIN_SPAN_ROOM = 1024;
/**
 * What thinning takes from the samples of merged windows: the span, not the endpoint (span_name
 * stays), so samples of the same stack and endpoint merge into one.
 */
const THINNED_LABELS: ReadonlySet<string> = new Set([LABEL_SPAN_ID, LABEL_TRACE_ID]);

interface WindowOnDisk {
  seq: number;
  files: { type: ProfileType; file: string; bytes: number }[];
  bytes: number;
}

/**
 * Where to split a batch of kept spans (SpanKeeper writes each local trace's spans with its root
 * last): after the local root nearest the middle, else in the middle; 0 for a single span.
 */
export function splitPoint(batch: readonly ReadableSpan[]): number {
  if (batch.length < 2) return 0;
  const middle = batch.length / 2;
  let best = 0;
  batch.forEach((span, i) => {
    const parent = span.parentSpanContext;
    const isRoot = parent === undefined || parent.isRemote === true;
    if (isRoot && i + 1 < batch.length && (best === 0 || Math.abs(i + 1 - middle) < Math.abs(best - middle))) best = i + 1;
  });
  return best || Math.floor(middle);
}

export interface RecorderMeta {
  pyroRunVersion: string;
  command: string[];
  startedAt: Date;
}

/**
 * Local mode's destination: each profile window as gzipped pprof files and the spans chosen by
 * SpanKeeper (every local root counted into the manifest's endpoint totals, details kept by its
 * rule) as OTLP/JSON lines, under one folder per run, with a manifest rewritten after every write
 * (at most once a second for spans). Every file is written atomically, so a reader — or a SIGKILL
 * at any instant — sees whole files only. Disk use is capped per run and for the whole output
 * folder (TotalCap): older finished runs are deleted first, then this run's oldest profile windows,
 * counted. Spans take at most SPAN_SHARE_OF_CAP of the run's cap and never evict a window. A full disk drops what
 * comes (counted) for DISK_FULL_PAUSE_MS, then writing is tried again; any other write error
 * (no permission, a read-only file system) stops the recording. Either says so once; the app
 * goes on.
 */
export class LocalRecorder implements Destination {
  readonly dir: string;
  private readonly manifest: Manifest;
  private readonly encoder: WindowEncoder;
  /** Spans as the lines of a span file, SPANS_PER_LINE a line, without the last newline. */
  private readonly serialize: (spans: ReadableSpan[]) => Uint8Array | undefined;
  /** Profile windows on disk, oldest first, for the cap. */
  private readonly windowsOnDisk: WindowOnDisk[] = [];
  private windowSeq = 0;
  private spanSeq = 0;
  private spanBytes = 0;
  private readonly keeper = new SpanKeeper();
  /** Kept spans not written yet, and the timer that writes them. */
  private unwritten: ReadableSpan[] = [];
  private writeTimer: NodeJS.Timeout | undefined;
  /** When spans were last written (performance.now(): elapsed times are the monotonic clock's, which no clock step moves). */
  private lastSpanWriteAt = Number.NEGATIVE_INFINITY;
  /** Span IDs the samples of the windows written lately are labelled with. */
  private recentSampledIds: { untilMs: number; ids: ReadonlySet<string> }[] = [];
  /** Size of run.json as last written: it is part of what the run holds on disk. */
  private manifestBytes = 0;
  private readonly total: TotalCap;
  private readonly heartbeat: NodeJS.Timeout;
  /** Until when (performance.now()) writes are dropped after a full disk; 0 when they are not. */
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
    this.encoder = new WindowEncoder(log, PPROF);
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
      counts: { windows: 0, profileFiles: 0, spanFiles: 0, spans: 0, bytes: 0, droppedWindows: 0, thinnedWindows: 0, droppedSpans: 0, summarizedSpans: 0 },
      endpoints: this.keeper.totals.list(),
      agentDir: AGENT_DIR,
    };
    // Loaded with the first batch, not at start.
    this.serialize = (spans) => {
      const parts: Uint8Array[] = [];
      for (let at = 0; at < spans.length; at += SPANS_PER_LINE) {
        const line = otlpJsonTraceSerializer().serializeRequest(spans.slice(at, at + SPANS_PER_LINE));
        if (line === undefined) return undefined;
        if (parts.length > 0) parts.push(NEWLINE);
        parts.push(line);
      }
      return Buffer.concat(parts);
    };
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
      (encoded, profiles) =>
        this.guard(() => {
          this.writeWindow(encoded, profiles);
          this.keepSampled([encoded], encoded.until);
        }),
      (error) => this.log.warnOnce('encode', `could not encode a profile window: ${reason(error)}`),
    );
  }

  /**
   * The heap limit was hit: the heap profile of this moment is written now, synchronously, as a
   * window of its own, and run.json says so; the process most likely dies of it next, with no exit
   * handler run (a later `exit`, should the app free memory and go on, finishes as usual).
   */
  outOfMemorySync(window: ProfileWindow): void {
    if (this.broken || this.closed) return;
    this.guard(() => {
      this.writeWindow(window, encodeSync(window, PPROF));
      this.manifest.outOfMemory = { at: new Date(window.until).toISOString(), window: this.windowSeq };
      this.writeManifest();
    });
  }

  /** The span IDs a window's samples were labelled with, once it is built. */
  private static sampledIdsOf(window: ProfileWindow): Set<string> {
    const ids = new Set<string>();
    for (const part of window.parts) for (const labels of part.labelled ?? []) ids.add(labels.toLabels(false)[LABEL_SPAN_ID]!);
    return ids;
  }

  /**
   * Summarised roots that `windows` (just written) or the windows of the last SAMPLED_IDS_KEPT_MS
   * show samples of are written after all (SpanKeeper.sampled): what a user opens in the report
   * has its details. Windows are remembered that long because a root's span reaches the recorder
   * up to a span batch's delay after it ended, possibly windows later.
   */
  private keepSampled(windows: readonly ProfileWindow[], untilMs: number): void {
    for (const window of windows) this.recentSampledIds.push({ untilMs: window.until, ids: LocalRecorder.sampledIdsOf(window) });
    const newest = Math.max(...this.recentSampledIds.map((w) => w.untilMs));
    this.recentSampledIds = this.recentSampledIds.filter((w) => w.untilMs >= newest - SAMPLED_IDS_KEPT_MS);
    const late = this.keeper.sampled((spanId) => this.recentSampledIds.some((w) => w.ids.has(spanId)), untilMs);
    if (late.length === 0) return;
    this.unwritten.push(...late);
    this.writeSoon();
  }

  /** The run keeps its folder name; the manifest, which the report reads, names the service. */
  renameService(name: string): void {
    if (this.broken || this.closed || name === this.manifest.service) return;
    this.manifest.service = name;
    this.guard(() => this.writeManifest());
  }

  spans(batch: ReadableSpan[]): void {
    if (this.broken || this.closed) return;
    this.keep(batch);
    if (this.unwritten.length >= SPANS_PER_FILE || performance.now() - this.lastSpanWriteAt >= WRITE_EVERY_MS) this.writeKept();
    else this.writeSoon();
  }

  /** Dropped before it reached us: its root still counts in the endpoint totals, which promise every one. */
  spanDropped(span: ReadableSpan): void {
    if (this.broken || this.closed) return;
    this.keeper.dropped(span);
    this.manifest.counts.droppedSpans++;
  }

  /** Log records and metrics are not recorded locally: in local mode they stay the NodeSDK's (tracing.ts). */
  logRecords(): void {}

  metrics(): void {}

  /** The queued spans are written within WRITE_EVERY_MS. */
  private writeSoon(): void {
    this.writeTimer ??= setTimeout(() => this.writeKept(), WRITE_EVERY_MS).unref();
  }

  /** Counts every root of `batch` and queues what the keeping rule chose. */
  private keep(batch: readonly ReadableSpan[]): void {
    for (const span of this.keeper.take(batch, Date.now())) this.unwritten.push(span);
  }

  /** Writes the queued spans as one file, and the manifest with the endpoint totals. */
  private writeKept(): void {
    clearTimeout(this.writeTimer);
    this.writeTimer = undefined;
    if (this.broken) return;
    this.lastSpanWriteAt = performance.now();
    const spans = this.unwritten;
    this.unwritten = [];
    if (this.diskFull()) {
      this.manifest.counts.droppedSpans += spans.length;
      return;
    }
    this.guard(() => {
      if (spans.length > 0) this.writeSpans(spans);
      this.writeManifest();
    });
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
      if (last.window) windows.push([last.window, encodeSync(last.window, PPROF)]);
      for (const [window, profiles] of windows) this.writeWindow(window, profiles);
      for (const batch of last.spanBatches) this.keep(batch);
      this.keepSampled(
        windows.map(([window]) => window),
        Number.POSITIVE_INFINITY,
      );
      this.unwritten.push(...this.keeper.drain());
      clearTimeout(this.writeTimer);
      if (this.unwritten.length > 0) this.writeSpans(this.unwritten);
      this.unwritten = [];
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
    if (this.thinIntoOnly(profiles, bytes)) {
      this.writeManifest();
      return;
    }
    const room = this.makeRoom(bytes);
    if (room !== true) {
      this.manifest.counts.droppedWindows++;
      this.log.warnOnce('cap-window-too-big', `a profile window (${bytes} bytes) is larger than the room left under ${room}; it is not recorded (counted in run.json)`);
      this.writeManifest();
      return;
    }
    const files: WindowOnDisk['files'] = [];
    try {
      for (const { type, body } of profiles) {
        const file = path.join(this.dir, PROFILES_DIR, profileFileName(seq, type));
        writeFileAtomicSync(file, body);
        files.push({ type, file, bytes: body.byteLength });
      }
    } catch (error) {
      // A window is on disk whole or not at all: its cpu file without its wall file would be counted by no one.
      for (const { file } of files) removeQuietly(file);
      this.manifest.counts.droppedWindows++;
      throw error;
    }
    this.windowsOnDisk.push({ seq, files, bytes });
    const { counts } = this.manifest;
    counts.windows++;
    counts.profileFiles += files.length;
    counts.bytes += bytes;
    this.writeManifest();
  }

  /** One span file; the caller writes the manifest. */
  private writeSpans(batch: ReadableSpan[]): void {
    if (batch.length === 0) return;
    const { counts } = this.manifest;
    const { left, limit } = this.spanRoom();
    // Without room for any span file, spans are counted without being serialized first.
    const body = left < MIN_SPAN_ROOM ? undefined : this.serialize(batch);
    if (body === undefined && left >= MIN_SPAN_ROOM) return;
    const bytes = body === undefined ? Number.POSITIVE_INFINITY : body.byteLength + 1;
    const room = bytes > left ? limit : this.makeRoom(bytes, false);
    if (room !== true || body === undefined) {
      // What fits goes: the batch is split between two local traces and each half tried.
      const at = body === undefined ? 0 : splitPoint(batch);
      if (at > 0) {
        this.writeSpans(batch.slice(0, at));
        this.writeSpans(batch.slice(at));
        return;
      }
      counts.droppedSpans += batch.length;
      this.log.warnOnce('cap-spans', `the recording reached ${room === true ? limit : room}; further span details are not recorded (counted in run.json; every request is still counted in the endpoint totals, and profiles keep their room)`);
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
    counts.bytes += bytes;
    this.spanBytes += bytes;
  }

  /**
   * Makes room for `bytes` more: first under the output folder's total cap (older finished runs
   * go), then under this run's cap, when `evictWindows` (for a newer window; spans never take a
   * window's room) by merging two of this run's older profile windows into one (thinOlder), or
   * when that saves nothing, deleting the oldest. True when they fit; else the cap that stops
   * them, in words.
   */
  private makeRoom(bytes: number, evictWindows = true): true | string {
    const { counts, capBytes } = this.manifest;
    const manifestBytes = this.manifestRoom();
    const totalRoom = this.total.room(counts.bytes + manifestBytes + bytes) - manifestBytes;
    const byTotal = totalRoom < capBytes;
    const cap = byTotal ? totalRoom : capBytes;
    const capText = byTotal
      ? `the ${megabytes(this.total.capBytes)} total cap of the recordings in ${path.dirname(this.dir)} (--max-total-size), which other runs still recording take their share of`
      : `its ${megabytes(capBytes)} cap`;
    while (evictWindows && counts.bytes + bytes > cap && this.windowsOnDisk.length > 0) {
      if (this.thinOlder()) continue;
      const oldest = this.windowsOnDisk.shift()!;
      for (const { file } of oldest.files) nodeFs().unlinkSync(file);
      counts.bytes -= oldest.bytes;
      counts.profileFiles -= oldest.files.length;
      counts.droppedWindows++;
      this.log.warnOnce(byTotal ? 'total-cap-windows' : 'cap-windows', `the recording reached ${capText}; the oldest profile windows are deleted to make room (counted in run.json)`);
    }
    return counts.bytes + bytes <= cap || capText;
  }

  /**
   * Merges two neighbouring windows of the older half into the older one's files
   * (profile-merge.ts, without span labels): every time range stays, with less detail. The pair
   * taken is the smallest there, so that merges stay small (the main thread does them) and the
   * recent windows keep their spans longest. False when there are not two windows, or when
   * merging saves nothing (or fails: then it says why at debug level).
   */
  private thinOlder(): boolean {
    const windows = this.windowsOnDisk;
    const olderHalf = Math.max(1, Math.ceil(windows.length / 2));
    let at = -1;
    for (let i = 0; i < olderHalf && i + 1 < windows.length; i++) {
      const pair = (windows[i] as WindowOnDisk).bytes + (windows[i + 1] as WindowOnDisk).bytes;
      if (at < 0 || pair < (windows[at] as WindowOnDisk).bytes + (windows[at + 1] as WindowOnDisk).bytes) at = i;
    }
    const older = windows[at];
    const newer = windows[at + 1];
    if (older === undefined || newer === undefined) return false;
    const merged = this.merged(older, newer.files.map(({ type, file }) => ({ type, body: nodeFs().readFileSync(file) })), newer.bytes);
    if (merged === undefined) return false;
    for (const { file } of newer.files) nodeFs().unlinkSync(file);
    windows.splice(at, 2, merged);
    this.manifest.counts.profileFiles -= newer.files.length;
    this.manifest.counts.bytes -= newer.bytes;
    return true;
  }

  /**
   * A window that does not fit next to the only one on disk is merged into it, if that fits; the
   * window is then counted as recorded and thinned.
   */
  private thinIntoOnly(profiles: EncodedProfile[], bytes: number): boolean {
    const [only] = this.windowsOnDisk;
    if (only === undefined || this.windowsOnDisk.length !== 1 || this.makeRoom(bytes, false) === true) return false;
    const merged = this.merged(only, profiles, bytes, (growth) => this.makeRoom(growth, false) === true);
    if (merged === undefined) return false;
    this.windowsOnDisk.splice(0, 1, merged);
    this.manifest.counts.windows++;
    return true;
  }

  /**
   * `older` rewritten with `newer`'s profiles merged in, its size counted; undefined when that
   * would not be smaller than the two apart, when `fits` says no to what `older` would grow by,
   * or when it fails (said at debug level).
   */
  private merged(older: WindowOnDisk, newer: readonly { type: ProfileType; body: Uint8Array }[], newerBytes: number, fits: (growth: number) => boolean = () => true): WindowOnDisk | undefined {
    let files: { type: ProfileType; file: string; body: Buffer }[];
    try {
      const parts = [...older.files.map(({ type, file }) => ({ type, body: nodeFs().readFileSync(file) as Uint8Array })), ...newer];
      files = [...new Set(parts.map((part) => part.type))].map((type) => ({
        type,
        file: path.join(this.dir, PROFILES_DIR, profileFileName(older.seq, type)),
        body: mergeGzippedProfiles(
          parts.filter((part) => part.type === type).map((part) => part.body),
          THINNED_LABELS,
        ),
      }));
    } catch (error) {
      this.log.debug(`could not merge profile window ${older.seq} with a newer one: ${reason(error)}`);
      return undefined;
    }
    const bytes = files.reduce((sum, f) => sum + f.body.byteLength, 0);
    if (bytes >= older.bytes + newerBytes || !fits(bytes - older.bytes)) return undefined;
    for (const { file, body } of files) writeFileAtomicSync(file, body);
    const { counts } = this.manifest;
    counts.bytes += bytes - older.bytes;
    counts.profileFiles += files.length - older.files.length;
    counts.thinnedWindows++;
    this.log.warnOnce('cap-thin', `the recording reached its cap; older profile windows are merged to make room: their samples keep their endpoint, not their span (counted in run.json)`);
    return { seq: older.seq, files: files.map(({ type, file, body }) => ({ type, file, bytes: body.byteLength })), bytes };
  }

  /**
   * Room left for span files under this run's cap: their share of it, and what the profiles left
   * (spans never take a window's room); `limit` names the one that binds.
   */
  private spanRoom(): { left: number; limit: string } {
    const { counts, capBytes } = this.manifest;
    const share = capBytes * SPAN_SHARE_OF_CAP - this.spanBytes;
    const run = capBytes - counts.bytes - this.manifestRoom();
    return share <= run ? { left: share, limit: `the ${megabytes(capBytes * SPAN_SHARE_OF_CAP)} of its cap that spans may take` } : { left: run, limit: `its ${megabytes(capBytes)} cap` };
  }

  /** What this run holds on disk. */
  private ownBytes(): number {
    return this.manifest.counts.bytes + this.manifestBytes;
  }

  /** The room run.json takes: as it would be written now, plus MANIFEST_GROWTH. */
  private manifestRoom(): number {
    return Buffer.byteLength(this.manifestText()) + MANIFEST_GROWTH;
  }

  /** run.json now, with the keeper's totals and count of summarised spans as they stand. */
  private manifestText(): string {
    this.manifest.counts.summarizedSpans = this.keeper.summarized;
    this.manifest.endpoints = this.keeper.totals.list();
    const cpu = process.cpuUsage();
    this.manifest.processCpuNs = (cpu.user + cpu.system) * 1000;
    return `${JSON.stringify(this.manifest, null, 2)}\n`;
  }

  private writeManifest(): void {
    const text = this.manifestText();
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
    return this.diskFullUntil !== 0 && performance.now() < this.diskFullUntil;
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
        this.diskFullUntil = performance.now() + DISK_FULL_PAUSE_MS;
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
