import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Block } from '../../blocks/block.js';
import type { Config } from '../../config/index.js';
import { type Logger, reason } from '../../log.js';
import type { ProfileWindow } from '../../profiling/profiler.js';
import { type Manifest, RUN_HEARTBEAT_MS } from '../../recording.js';
import { removeQuietly } from '../../util/atomic-file.js';
import type { Destination, FinalData } from '../destination.js';
import { encodeSync, PPROF, WindowEncoder } from '../../profiling/window-encoder.js';
import { BlockFile } from './block-file.js';
import { MergeThread } from './merge-thread.js';
import { ProfileWindows } from './profile-windows.js';
import { createRunFolder } from './run-folder.js';
import { RunCaps } from './run-caps.js';
import { SampledSpans } from './sampled-spans.js';
import { type RecorderMeta, RunManifest } from './run-manifest.js';
import { SpanFiles } from './span-files.js';
import { SpanKeeper } from './span-keeping.js';
import { WriteGuard } from './write-guard.js';

export type { RecorderMeta } from './run-manifest.js';

/** Kept spans are written together: at most one span file (and one run.json) per this long (the first batch at once)... */
const WRITE_EVERY_MS = 1000;
/** ...unless this many spans wait. */
const SPANS_PER_FILE = 4096;

/**
 * Local mode's destination: each profile window as gzipped pprof files (profile-windows.ts) and
 * the spans chosen by SpanKeeper (every local root counted into the manifest's endpoint totals,
 * details kept by its rule) as OTLP/JSON lines (span-files.ts), under one folder per run, with a
 * manifest (run-manifest.ts) rewritten after every write (at most once a second for spans). Every
 * file is written atomically, so a reader — or a SIGKILL at any instant — sees whole files only.
 * Disk use is capped per run and for the whole output folder (run-caps.ts, disk-budget.ts): older
 * finished runs are deleted first, then this run's older profile windows are thinned, merged in a
 * thread of their own (merge-thread.ts), or deleted, counted. Write errors are write-guard.ts's:
 * each says so once; the app goes on.
 */
export class LocalRecorder implements Destination {
  readonly dir: string;
  private readonly manifest: RunManifest;
  private readonly encoder: WindowEncoder;
  private readonly guard: WriteGuard;
  private readonly caps: RunCaps;
  private readonly windows: ProfileWindows;
  private readonly spanFiles: SpanFiles;
  private readonly blockFile: BlockFile;
  private readonly merger: MergeThread;
  private readonly keeper = new SpanKeeper();
  /** Kept spans not written yet, and the timer that writes them. */
  private unwritten: ReadableSpan[] = [];
  private writeTimer: NodeJS.Timeout | undefined;
  /** When spans were last written (performance.now(): elapsed times are the monotonic clock's, which no clock step moves). */
  private lastSpanWriteAt = Number.NEGATIVE_INFINITY;
  private readonly sampled = new SampledSpans();
  private readonly heartbeat: NodeJS.Timeout;
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
    this.manifest = new RunManifest(this.dir, config, meta, { summarized: () => this.keeper.summarized, endpoints: () => this.keeper.totals.list() });
    try {
      this.manifest.write();
    } catch (error) {
      // A folder without run.json is no recording: nothing would ever clean it up.
      removeQuietly(this.dir);
      throw error;
    }
    this.guard = new WriteGuard(this.dir, log);
    this.caps = new RunCaps(baseDir, this.dir, config.local?.totalCapBytes ?? Number.POSITIVE_INFINITY, this.manifest, log);
    this.merger = new MergeThread(log);
    this.windows = new ProfileWindows({ dir: this.dir, manifest: this.manifest, caps: this.caps, guard: this.guard, merger: this.merger, log });
    this.spanFiles = new SpanFiles(this.dir, this.manifest, this.caps, log);
    this.blockFile = new BlockFile(this.dir, this.manifest, this.caps, this.guard, log);
    // Tells other processes this run is alive when there is nothing to write (see isRunning).
    this.heartbeat = setInterval(() => {
      if (this.live()) this.manifest.touch(log);
    }, RUN_HEARTBEAT_MS).unref();
  }

  profiles(window: ProfileWindow): void {
    if (!this.live()) return;
    if (this.guard.paused()) {
      this.manifest.counts.droppedWindows++;
      return;
    }
    this.encoder.encode(
      window,
      (encoded, profiles) => {
        if (!this.live()) return;
        this.windows.add(profiles);
        this.keepSampled([encoded], encoded.until);
      },
      (error) => this.log.warnOnce('encode', `could not encode a profile window: ${reason(error)}`),
    );
  }

  /**
   * The heap limit was hit: the heap profile of this moment is written now, synchronously, as a
   * window of its own (after those waiting), and run.json says so; the process most likely dies
   * of it next, with no exit handler run (a later `exit`, should the app free memory and go on,
   * finishes as usual).
   */
  outOfMemorySync(window: ProfileWindow): void {
    if (!this.live()) return;
    this.guard.run(() => {
      this.windows.writeAllSync([encodeSync(window, PPROF)]);
      this.manifest.data.outOfMemory = { at: new Date(window.until).toISOString(), window: this.windows.last };
      this.manifest.write();
    });
  }

  /**
   * Summarised roots that `windows` (just encoded) or the windows of the last minute show samples
   * of are written after all (SpanKeeper.sampled): what a user opens in the report has its details.
   */
  private keepSampled(windows: readonly ProfileWindow[], untilMs: number): void {
    this.sampled.add(windows);
    const late = this.keeper.sampled((spanId) => this.sampled.has(spanId), untilMs);
    if (late.length === 0) return;
    this.unwritten.push(...late);
    this.writeSoon();
  }

  /** The run keeps its folder name; the manifest, which the report reads, names the service. */
  renameService(name: string): void {
    if (!this.live() || name === this.manifest.data.service) return;
    this.manifest.data.service = name;
    this.guard.run(() => this.manifest.write());
  }

  spans(batch: ReadableSpan[]): void {
    if (!this.live()) return;
    this.keep(batch);
    if (this.unwritten.length >= SPANS_PER_FILE || performance.now() - this.lastSpanWriteAt >= WRITE_EVERY_MS) this.writeKept();
    else this.writeSoon();
  }

  /** Dropped before it reached us: its root still counts in the endpoint totals, which promise every one. */
  spanDropped(span: ReadableSpan): void {
    if (!this.live()) return;
    this.keeper.dropped(span);
    this.manifest.counts.droppedSpans++;
  }

  /** Event-loop blocks of `thresholdMs` or longer are watched: run.json says so from now on. */
  blocksWatched(thresholdMs: number): void {
    if (this.live()) this.blockFile.watched(thresholdMs);
  }

  /** An event-loop block: counted, and kept in blocks.json if it is among the longest (block-file.ts). */
  blocks(block: Block): void {
    if (this.live()) this.blockFile.add(block);
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
    if (this.guard.broken) return;
    this.lastSpanWriteAt = performance.now();
    const spans = this.unwritten;
    this.unwritten = [];
    if (this.guard.paused()) {
      this.manifest.counts.droppedSpans += spans.length;
      return;
    }
    this.guard.run(() => {
      this.spanFiles.write(spans);
      this.manifest.write();
    });
  }

  /** Waits for the windows being encoded, and for the merges they wait on, within the deadline. */
  async finishAsync(last: FinalData, deadlineAt: number): Promise<void> {
    await this.encoder.settle();
    await this.windows.settle(deadlineAt);
    this.finishSync(last, deadlineAt);
  }

  finishSync(last: FinalData, _deadlineAt?: number): void {
    if (this.closed) return;
    clearInterval(this.heartbeat);
    this.guard.run(() => {
      const windows = this.encoder.takePendingSync();
      if (last.window) windows.push([last.window, encodeSync(last.window, PPROF)]);
      this.windows.writeAllSync(windows.map(([, profiles]) => profiles));
      for (const batch of last.spanBatches) this.keep(batch);
      this.keepSampled(
        windows.map(([window]) => window),
        Number.POSITIVE_INFINITY,
      );
      this.unwritten.push(...this.keeper.drain());
      clearTimeout(this.writeTimer);
      this.spanFiles.write(this.unwritten);
      this.unwritten = [];
      this.blockFile.write();
      this.manifest.data.endedAt = new Date().toISOString();
      this.manifest.data.complete = true;
      this.manifest.write();
    });
    this.closed = true;
    this.merger.stop();
    // After the last writes, which may have deleted older runs too.
    this.caps.settle();
    if (!this.guard.broken) this.onClosed(this.dir, this.manifest.data);
  }

  private live(): boolean {
    return !this.guard.broken && !this.closed;
  }
}
