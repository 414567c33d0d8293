/**
 * The on-disk recording format of local mode (docs/local-mode.md): written by the local
 * recorder, read by `pyro-run report`. One definition serves both.
 */
import type { BlockFrame, BlockSpan, BlockStack } from './blocks/block.js';
import type { ProfileType } from './config/index.js';
import type { Histogram } from './util/duration-histogram.js';

export const RECORDING_FORMAT = 'pyro-run-recording';
export const RECORDING_FORMAT_VERSION = 1;
export const MANIFEST_FILE = 'run.json';
export const PROFILES_DIR = 'profiles';
export const SPANS_DIR = 'spans';
/** The run's event-loop blocks (RecordedBlocks); absent in recordings made before blocks were watched, or with the watch off. */
export const BLOCKS_FILE = 'blocks.json';

export interface RunCounts {
  windows: number;
  profileFiles: number;
  spanFiles: number;
  spans: number;
  bytes: number;
  droppedWindows: number;
  /** Windows merged into an older one to fit the cap (their samples keep their endpoint, not their span). */
  thinnedWindows: number;
  /** Spans the keeping rule chose but the cap or the disk had no room for. */
  droppedSpans: number;
  /** Spans the keeping rule did not choose (under load): their local roots are in `endpoints`. */
  summarizedSpans: number;
}

/**
 * Every local root of one name and kind, counted as it ended, whether or not its details were
 * kept: the report's endpoint counts, errors and percentiles come from here.
 */
export interface EndpointTotal {
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  count: number;
  errors: number;
  totalNs: number;
  maxNs: number;
  /** Durations (duration-histogram.ts). */
  histogram: Histogram;
}

export interface Manifest {
  format: typeof RECORDING_FORMAT;
  formatVersion: number;
  service: string;
  pyroRunVersion: string;
  nodeVersion: string;
  pid: number;
  /**
   * Where `pid` names this process: `<boot id>/<pid namespace>` on Linux, null elsewhere. Another
   * process with the same value can ask the kernel whether `pid` still lives; any other cannot.
   */
  pidNamespace: string | null;
  command: string[];
  startedAt: string;
  endedAt: string | null;
  complete: boolean;
  samplingIntervalMicros: number;
  flushIntervalMs: number;
  profileTypes: ProfileType[];
  capBytes: number;
  counts: RunCounts;
  endpoints: EndpointTotal[];
  /** When the app hit its heap limit: the time and the window that holds the heap profile of that moment. */
  outOfMemory?: { at: string; window: number };
  /** The agent's dist folder: its frames in the profiles are under it (the report folds them out of the app's stacks). */
  agentDir?: string;
  /**
   * Event-loop blocks were watched (docs/event-loop-blocks.md): stalls of `thresholdMs` or longer,
   * `count` of them in all, the longest of which BLOCKS_FILE holds. Absent when they were not
   * watched (the watch off, no CPU or wall profile, or a recording made before the watch existed).
   */
  blocks?: { thresholdMs: number; count: number };
  /**
   * The process's CPU time so far (process.cpuUsage, user + system), nanoseconds: with the profiles'
   * CPU of the JavaScript threads, what ran on other threads (libuv's pool, V8's helpers, add-ons).
   */
  processCpuNs?: number;
}

/** One block in BLOCKS_FILE (src/blocks/block.ts Block, its frames in the file's table). */
export interface RecordedBlock {
  /** When it began (ISO, UTC). */
  startedAt: string;
  durationMs: number;
  /** The span most of its samples belong to (its name as the profiles label it); null when most belong to none, or the process did not run through it. */
  span: BlockSpan | null;
  /** How long of it the thread was there to hold the loop (Block.ranMs); absent in recordings made before it was kept: all of it. */
  ranMs?: number;
  /** Its samples with JavaScript (or GC) running, and how many of them are the span's. */
  samples: number;
  spanSamples: number;
  /** Its stacks, heaviest first: frames as indices into RecordedBlocks.frames, root first. */
  stacks: BlockStack[];
  /** Index into `stacks` of the span's heaviest; -1 when it has none. */
  heaviest: number;
}

/** BLOCKS_FILE: the run's longest blocks (run.json `blocks.count` counts them all), their frames in one table. */
export interface RecordedBlocks {
  frames: BlockFrame[];
  /** Longest first. */
  blocks: RecordedBlock[];
}

const seq = (n: number) => String(n).padStart(6, '0');

export function profileFileName(window: number, type: ProfileType): string {
  return `${seq(window)}-${type}.pb.gz`;
}

export function spanFileName(batch: number): string {
  return `${seq(batch)}.jsonl`;
}

/**
 * `<service>-<YYYYMMDD>-<HHMMSS>-<pid>`, safe as a folder name everywhere; attempt 2 and on add
 * `-<attempt>`: two replicas that are both PID 1 and start in the same second get the same name.
 */
export function runFolderName(service: string, startedAt: Date, pid: number, attempt = 1): string {
  const iso = startedAt.toISOString();
  const stamp = `${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}`;
  const safe = service.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80) || 'service';
  return `${safe}-${stamp}-${pid}${attempt > 1 ? `-${attempt}` : ''}`;
}

/** When a run started, for ordering runs: the manifest's startedAt; undefined when it has none that parses. */
export function runStartedAtMs(manifest: unknown): number | undefined {
  const startedAt = typeof manifest === 'object' && manifest !== null ? (manifest as { startedAt?: unknown }).startedAt : undefined;
  const ms = typeof startedAt === 'string' ? Date.parse(startedAt) : Number.NaN;
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * A running recorder writes its run.json at least this often (it touches it when it has nothing
 * to write), so that other processes can tell a live run from one whose process died.
 */
export const RUN_HEARTBEAT_MS = 30_000;
/**
 * A run that is not complete and whose run.json has not been written for this long is a run whose
 * process is gone (SIGKILL, OOM, power loss): ten missed heartbeats.
 */
export const RUN_STALE_MS = 10 * RUN_HEARTBEAT_MS;
/** A run folder being deleted is first renamed to `<this><name>…`, hidden from readers, then removed. */
export const DELETING_PREFIX = '.pyro-run-deleting-';

/** Files whose name starts with a dot are unfinished writes: readers skip them. */
export function isUnfinished(name: string): boolean {
  return name.startsWith('.');
}
