/**
 * The on-disk recording format of local mode (docs/local-mode.md): written by the local
 * recorder, read by `pyro-run report`. One definition serves both.
 */
import type { ProfileType } from './config.js';

export const RECORDING_FORMAT = 'pyro-run-recording';
export const RECORDING_FORMAT_VERSION = 1;
export const MANIFEST_FILE = 'run.json';
export const PROFILES_DIR = 'profiles';
export const SPANS_DIR = 'spans';

export interface RunCounts {
  windows: number;
  profileFiles: number;
  spanFiles: number;
  spans: number;
  bytes: number;
  droppedWindows: number;
  droppedSpans: number;
}

export interface Manifest {
  format: typeof RECORDING_FORMAT;
  formatVersion: number;
  service: string;
  pyroRunVersion: string;
  nodeVersion: string;
  pid: number;
  command: string[];
  startedAt: string;
  endedAt: string | null;
  complete: boolean;
  samplingIntervalMicros: number;
  flushIntervalMs: number;
  profileTypes: ProfileType[];
  capBytes: number;
  counts: RunCounts;
}

const seq = (n: number) => String(n).padStart(6, '0');

export function profileFileName(window: number, type: ProfileType): string {
  return `${seq(window)}-${type}.pb.gz`;
}

export function spanFileName(batch: number): string {
  return `${seq(batch)}.jsonl`;
}

/** `<service>-<YYYYMMDD>-<HHMMSS>-<pid>`, safe as a folder name everywhere. */
export function runFolderName(service: string, startedAt: Date, pid: number): string {
  const iso = startedAt.toISOString();
  const stamp = `${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}`;
  const safe = service.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80) || 'service';
  return `${safe}-${stamp}-${pid}`;
}

/** Files whose name starts with a dot are unfinished writes: readers skip them. */
export function isUnfinished(name: string): boolean {
  return name.startsWith('.');
}
