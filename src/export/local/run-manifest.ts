import path from 'node:path';
import { AGENT_DIR } from '../../util/agent-dir.js';
import { nodeFs } from '../../util/builtins.js';
import type { Config } from '../../config/index.js';
import { type Logger, reason } from '../../log.js';
import { type EndpointTotal, MANIFEST_FILE, type Manifest, RECORDING_FORMAT, RECORDING_FORMAT_VERSION } from '../../recording.js';
import { writeFileAtomicSync } from '../../util/atomic-file.js';
import { pidNamespace } from './run-liveness.js';

/**
 * run.json grows between the writes that make room (counts gain digits, endpoints and their
 * histogram buckets appear): room is made for it as it is now plus this much.
 */
export const MANIFEST_GROWTH = 2048;

export interface RecorderMeta {
  pyroRunVersion: string;
  command: string[];
  startedAt: Date;
}

/** What run.json takes from the span keeping as it stands at each write. */
export interface KeptTotals {
  summarized: () => number;
  endpoints: () => EndpointTotal[];
}

/**
 * A run's manifest, run.json (recording.ts): what the run is, what it holds (`counts`, which the
 * writers keep), the endpoint totals and the process's CPU, rewritten whole and atomically on
 * every write, so a reader only ever sees one that was complete.
 */
export class RunManifest {
  readonly data: Manifest;
  private readonly file: string;
  /** Size of run.json as last written: it is part of what the run holds on disk. */
  private writtenBytes = 0;

  constructor(
    dir: string,
    config: Config,
    meta: RecorderMeta,
    private readonly kept: KeptTotals,
  ) {
    this.file = path.join(dir, MANIFEST_FILE);
    this.data = {
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
      endpoints: kept.endpoints(),
      agentDir: AGENT_DIR,
    };
  }

  get counts(): Manifest['counts'] {
    return this.data.counts;
  }

  write(): void {
    const text = this.text();
    writeFileAtomicSync(this.file, text);
    this.writtenBytes = Buffer.byteLength(text);
  }

  /** What this run holds on disk: its files and run.json as last written. */
  ownBytes(): number {
    return this.data.counts.bytes + this.writtenBytes;
  }

  /** The room run.json takes: as it would be written now, plus MANIFEST_GROWTH. */
  room(): number {
    return Buffer.byteLength(this.text()) + MANIFEST_GROWTH;
  }

  /** Tells other processes the run is alive when there is nothing to write (run-liveness.ts isRunning). */
  touch(log: Logger): void {
    try {
      const now = new Date();
      nodeFs().utimesSync(this.file, now, now);
    } catch (error) {
      log.debug(`could not touch ${this.file}: ${reason(error)}`);
    }
  }

  /** run.json now, with the keeper's totals and count of summarised spans as they stand. */
  private text(): string {
    this.data.counts.summarizedSpans = this.kept.summarized();
    this.data.endpoints = this.kept.endpoints();
    const cpu = process.cpuUsage();
    this.data.processCpuNs = (cpu.user + cpu.system) * 1000;
    return `${JSON.stringify(this.data, null, 2)}\n`;
  }
}
