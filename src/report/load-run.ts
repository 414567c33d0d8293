/**
 * Reads a recording (docs/local-mode.md) from disk: the manifest, every profile window and every
 * span batch. Synchronous on purpose: the app summarises its own recording at process exit, where
 * only synchronous I/O still runs. Every failure is a RunError whose message is one line a user
 * can act on; nothing here prints.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';
import {
  type EndpointTotal,
  isUnfinished,
  MANIFEST_FILE,
  PROFILES_DIR,
  RECORDING_FORMAT,
  RECORDING_FORMAT_VERSION,
  type RunCounts,
  runStartedAtMs,
  SPANS_DIR,
} from '../recording.js';
import { isProfileType, profileTypeInfo, shownSampleType } from '../profiling/profile-types.js';
import { readSpanBatch, type RunSpan } from './otlp-spans.js';
import { readBlocks, type RunBlock } from './run-blocks.js';
import { type ProfileKind, type SampleIndex, SampleIndexBuilder } from './sample-index.js';

export type { RunSpan } from './otlp-spans.js';
export type { RunBlock } from './run-blocks.js';
export type { ProfileKind, SampleIndex } from './sample-index.js';

/**
 * Why a recording cannot be read: `missing` (no such folder), `no-run` (no run.json in it or its
 * subfolders), `empty` (a run with nothing recorded yet), `corrupt` (a file that cannot be read;
 * the message names it).
 */
export type RunErrorCode = 'missing' | 'no-run' | 'empty' | 'corrupt';

/** A recording that cannot be read, in one line (the CLI prints it after `pyro-run report: `). */
export class RunError extends Error {
  override readonly name = 'RunError';

  constructor(
    readonly code: RunErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** run.json as written by the recorder; fields a reader can live without default to empty values. */
export interface RunManifest {
  formatVersion: number;
  service: string;
  pyroRunVersion: string;
  nodeVersion: string;
  pid: number | undefined;
  command: string[];
  startedAt: string | undefined;
  /** null while the app runs, or when it was killed before writing its last manifest. */
  endedAt: string | null;
  complete: boolean;
  samplingIntervalMicros: number | undefined;
  flushIntervalMs: number | undefined;
  profileTypes: string[];
  counts: RunCounts;
  /** When the app hit its heap limit, and the window with the heap profile of that moment. */
  outOfMemory: { at: string; window: number } | undefined;
  /** Every local root counted by endpoint; undefined in recordings made before the recorder counted them. */
  endpoints: EndpointTotal[] | undefined;
  /** The agent's dist folder when it recorded; undefined in recordings made before it said. */
  agentDir: string | undefined;
  /** The process's CPU time as of the last manifest write, nanoseconds; undefined in older recordings. */
  processCpuNs: number | undefined;
  /** Event-loop blocks were watched: over what threshold, and how many there were; undefined when they were not (or in older recordings). */
  blocks: { thresholdMs: number; count: number } | undefined;
}

/** A profile file that was read; its samples are in LoadedRun.samples. */
export interface RunProfile {
  /** Path inside the run folder, e.g. `profiles/000001-cpu.pb.gz`. */
  file: string;
  /** The window number from the file name. */
  window: number;
  kind: ProfileKind;
  samples: number;
}

export interface LoadedRun {
  /** Absolute path of the run folder. */
  dir: string;
  manifest: RunManifest;
  /** Sorted by file name, so by window. */
  profiles: RunProfile[];
  /** Every profile's samples, indexed as they were read. */
  samples: SampleIndex;
  spans: RunSpan[];
  /** The event-loop blocks the recording kept, longest first (none in older recordings). */
  blocks: RunBlock[];
}

const PROFILE_FILE = /^(\d+)-([a-z]+)\.pb\.gz$/;
const SPAN_FILE = /\.jsonl$/;

/** Files of a run subfolder in name order; a folder that is not there yet has none. Dot names are temporaries. */
function listFiles(dir: string, pattern: RegExp): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => !isUnfinished(name) && pattern.test(name))
    .sort();
}

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** When a run started, for picking the newest: the manifest's startedAt, else when run.json was last written. */
function startedAtMs(runDir: string): number {
  const manifestPath = path.join(runDir, MANIFEST_FILE);
  try {
    const ms = runStartedAtMs(JSON.parse(readFileSync(manifestPath, 'utf8')));
    if (ms !== undefined) return ms;
  } catch {
    // An unreadable manifest still marks a run; loading it later reports what is wrong.
  }
  return statSync(manifestPath).mtimeMs;
}

/** The newest run folder (a subfolder holding a run.json) inside baseDir, or undefined when there is none. */
export function latestRun(baseDir: string): string | undefined {
  if (!isDirectory(baseDir)) return undefined;
  let best: { dir: string; ms: number } | undefined;
  for (const entry of readdirSync(baseDir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const dir = path.join(baseDir, entry.name);
    if (!existsSync(path.join(dir, MANIFEST_FILE))) continue;
    const ms = startedAtMs(dir);
    // Same start time: the later name (names end in the pid, so this is just a stable choice).
    if (best === undefined || ms > best.ms || (ms === best.ms && dir > best.dir)) best = { dir, ms };
  }
  return best?.dir;
}

/** DIR as a user names it (a run folder, or a folder of runs) → the absolute run folder to load. */
export function resolveRunDir(dir: string): string {
  const absolute = path.resolve(dir);
  if (!existsSync(absolute)) throw new RunError('missing', `${dir} does not exist`);
  if (!isDirectory(absolute)) throw new RunError('missing', `${dir} is not a directory`);
  if (existsSync(path.join(absolute, MANIFEST_FILE))) return absolute;
  const latest = latestRun(absolute);
  if (latest === undefined) throw new RunError('no-run', `no recording in ${dir} (no ${MANIFEST_FILE} in it or in its subfolders)`);
  return latest;
}

const asString = (value: unknown, fallback = ''): string => (typeof value === 'string' ? value : fallback);
const asNumber = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

function parseManifest(text: string, where: string): RunManifest {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new RunError('corrupt', `${where} is not valid JSON (${(error as Error).message})`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new RunError('corrupt', `${where} is not a JSON object`);
  const m = raw as Record<string, unknown>;
  if (m.format !== RECORDING_FORMAT)
    throw new RunError('corrupt', `${where} is not a pyro-run recording manifest (format is ${JSON.stringify(m.format)}, expected "${RECORDING_FORMAT}")`);
  const formatVersion = asNumber(m.formatVersion);
  if (formatVersion === undefined) throw new RunError('corrupt', `${where} has no formatVersion`);
  if (formatVersion > RECORDING_FORMAT_VERSION) {
    throw new RunError('corrupt', `${where} has formatVersion ${formatVersion}; this pyro-run reads up to ${RECORDING_FORMAT_VERSION} (upgrade pyro-run)`);
  }
  const counts = (typeof m.counts === 'object' && m.counts !== null ? m.counts : {}) as Record<string, unknown>;
  const count = (key: keyof RunCounts) => asNumber(counts[key]) ?? 0;
  return {
    formatVersion,
    service: asString(m.service),
    pyroRunVersion: asString(m.pyroRunVersion),
    nodeVersion: asString(m.nodeVersion),
    pid: asNumber(m.pid),
    command: Array.isArray(m.command) ? m.command.filter((word): word is string => typeof word === 'string') : [],
    agentDir: typeof m.agentDir === 'string' ? m.agentDir : undefined,
    processCpuNs: asNumber(m.processCpuNs),
    startedAt: typeof m.startedAt === 'string' ? m.startedAt : undefined,
    endedAt: typeof m.endedAt === 'string' ? m.endedAt : null,
    complete: m.complete === true,
    samplingIntervalMicros: asNumber(m.samplingIntervalMicros),
    flushIntervalMs: asNumber(m.flushIntervalMs),
    profileTypes: Array.isArray(m.profileTypes) ? m.profileTypes.filter((type): type is string => typeof type === 'string') : [],
    counts: {
      windows: count('windows'),
      profileFiles: count('profileFiles'),
      spanFiles: count('spanFiles'),
      spans: count('spans'),
      bytes: count('bytes'),
      droppedWindows: count('droppedWindows'),
      thinnedWindows: count('thinnedWindows'),
      droppedSpans: count('droppedSpans'),
      summarizedSpans: count('summarizedSpans'),
    },
    endpoints: Array.isArray(m.endpoints) ? parseEndpoints(m.endpoints, where) : undefined,
    outOfMemory: parseOutOfMemory(m.outOfMemory),
    blocks: parseBlockCount(m.blocks),
  };
}

function parseBlockCount(raw: unknown): RunManifest['blocks'] {
  const o = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const thresholdMs = asNumber(o.thresholdMs);
  const count = asNumber(o.count);
  return thresholdMs !== undefined && count !== undefined ? { thresholdMs, count } : undefined;
}

function parseOutOfMemory(raw: unknown): RunManifest['outOfMemory'] {
  const o = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const window = asNumber(o.window);
  return typeof o.at === 'string' && window !== undefined ? { at: o.at, window } : undefined;
}

function parseEndpoints(raw: unknown[], where: string): EndpointTotal[] {
  return raw.map((entry, i) => {
    const e = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
    const histogram = (typeof e.histogram === 'object' && e.histogram !== null ? e.histogram : {}) as Record<string, unknown>;
    const numbers = [e.kind, e.count, e.errors, e.totalNs, e.maxNs, ...Object.values(histogram)].map(asNumber);
    if (typeof e.name !== 'string' || numbers.includes(undefined))
      throw new RunError('corrupt', `${where} is corrupt (endpoint ${i} is not a name with numbers)`);
    return {
      name: e.name,
      kind: e.kind as number,
      count: e.count as number,
      errors: e.errors as number,
      totalNs: e.totalNs as number,
      maxNs: e.maxNs as number,
      histogram: histogram as Record<string, number>,
    };
  });
}

/**
 * gunzip (whose CRC catches damaged bytes) and decode, then check what decoding alone would let
 * through: pprof-format is lenient and turns many wrong inputs into an odd-looking Profile.
 */
function decodeProfile(bytes: Buffer, kind: ProfileKind, file: string): { profile: Profile; valueIndex: number } {
  let profile: Profile;
  try {
    profile = Profile.decode(gunzipSync(bytes));
  } catch (error) {
    throw new RunError('corrupt', `${file} is not a gzipped pprof profile (${(error as Error).message})`);
  }
  const strings = profile.stringTable.strings;
  const stringAt = (index: unknown) => strings[Number(index)];
  if (strings[0] !== '') throw new RunError('corrupt', `${file} is not a pprof profile (its string table does not start with "")`);
  const shown = shownSampleType(kind).type;
  const valueIndex = profile.sampleType.findIndex((type) => stringAt(type.type) === shown);
  if (valueIndex < 0) {
    const types = profile.sampleType.map((type) => `${stringAt(type.type)}/${stringAt(type.unit)}`).join(', ');
    throw new RunError('corrupt', `${file} has no ${shown} sample type (it has: ${types || 'none'})`);
  }
  const locations = new Set(profile.location.map((location) => Number(location.id)));
  for (const sample of profile.sample) {
    if (sample.value.length !== profile.sampleType.length)
      throw new RunError('corrupt', `${file} is corrupt (a sample has ${sample.value.length} values for ${profile.sampleType.length} sample types)`);
    for (const id of sample.locationId)
      if (!locations.has(Number(id))) throw new RunError('corrupt', `${file} is corrupt (a sample names location ${id}, which it does not define)`);
  }
  return { profile, valueIndex };
}

/**
 * Every profile file of a known type (other `<window>-<type>.pb.gz` files are left alone). Types
 * whose windows are snapshots (the heap: what was in use at the cut) are read from their newest
 * window only: two snapshots do not add up.
 */
function readProfiles(runDir: string, builder: SampleIndexBuilder): RunProfile[] {
  const profiles: RunProfile[] = [];
  const files = listFiles(path.join(runDir, PROFILES_DIR), PROFILE_FILE).flatMap((name) => {
    const [, window, type] = PROFILE_FILE.exec(name) as RegExpExecArray;
    return type !== undefined && isProfileType(type) ? [{ name, window: Number(window), kind: type }] : [];
  });
  const newest = new Map<ProfileKind, number>();
  for (const { window, kind } of files) newest.set(kind, Math.max(newest.get(kind) ?? 0, window));
  for (const { name, window, kind } of files) {
    if (profileTypeInfo(kind).across === 'latest' && window !== newest.get(kind)) continue;
    const file = `${PROFILES_DIR}/${name}`;
    const { profile, valueIndex } = decodeProfile(readFileSync(path.join(runDir, file)), kind, path.join(runDir, file));
    builder.add(profile, kind, valueIndex, window);
    profiles.push({ file, window, kind, samples: profile.sample.length });
  }
  return profiles;
}

function readSpans(runDir: string): RunSpan[] {
  const spans: RunSpan[] = [];
  for (const name of listFiles(path.join(runDir, SPANS_DIR), SPAN_FILE)) {
    const file = `${SPANS_DIR}/${name}`;
    const problem = readSpanBatch(readFileSync(path.join(runDir, file), 'utf8'), spans);
    if (problem !== undefined) throw new RunError('corrupt', `${path.join(runDir, file)} is corrupt (${problem})`);
  }
  return spans;
}

/**
 * Loads the run in `dir` (a run folder, or a folder of runs: then its newest run). Throws RunError
 * when the folder is missing or holds no run, when the run has nothing recorded yet, and when
 * run.json, a profile or a span file cannot be read (naming the file).
 */
export function loadRunSync(dir: string): LoadedRun {
  const runDir = resolveRunDir(dir);
  const manifestPath = path.join(runDir, MANIFEST_FILE);
  let manifestText: string;
  try {
    manifestText = readFileSync(manifestPath, 'utf8');
  } catch (error) {
    throw new RunError('corrupt', `cannot read ${manifestPath} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  const manifest = parseManifest(manifestText, manifestPath);
  const builder = new SampleIndexBuilder(manifest.agentDir);
  const profiles = readProfiles(runDir, builder);
  const blocks = readBlocks(runDir, builder, (problem) => new RunError('corrupt', problem));
  const spans = readSpans(runDir);
  if (profiles.length === 0 && spans.length === 0) throw new RunError('empty', `the recording in ${runDir} has no profiles or spans yet`);
  return { dir: runDir, manifest, profiles, samples: builder.build(), spans, blocks };
}
