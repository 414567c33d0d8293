import path from 'node:path';
import { nodeFs } from '../../util/builtins.js';
import { isUnfinished, MANIFEST_FILE, RECORDING_FORMAT, runStartedAtMs } from '../../recording.js';
import type { LivenessFacts } from './run-liveness.js';

/** A recording in the output folder, as its run.json and its files show it. */
export interface RunOnDisk extends LivenessFacts {
  name: string;
  /** For "oldest first": startedAt, else when run.json was last written. */
  startedAtMs: number;
  bytes: number;
}

/**
 * The recordings directly in `baseDir` other than `own`: folders (not links) whose run.json says
 * `"format": "pyro-run-recording"`. Nothing else is listed, so nothing else is ever counted or
 * deleted. Folders that vanish or cannot be read while listing are left out.
 */
export function listRuns(baseDir: string, own: string): RunOnDisk[] {
  const runs: RunOnDisk[] = [];
  for (const entry of nodeFs().readdirSync(baseDir, { withFileTypes: true })) {
    if (!entry.isDirectory() || isUnfinished(entry.name) || entry.name === own) continue;
    const run = readRun(baseDir, entry.name);
    if (run !== undefined) runs.push(run);
  }
  return runs;
}

/** One run folder, read afresh; undefined when it is gone, cannot be read or is not a recording. */
export function readRun(baseDir: string, name: string): RunOnDisk | undefined {
  const dir = path.join(baseDir, name);
  const manifestPath = path.join(dir, MANIFEST_FILE);
  try {
    const manifest: unknown = JSON.parse(nodeFs().readFileSync(manifestPath, 'utf8'));
    if (typeof manifest !== 'object' || manifest === null || (manifest as { format?: unknown }).format !== RECORDING_FORMAT) return undefined;
    const { pid, pidNamespace, complete } = manifest as Record<string, unknown>;
    const writtenAtMs = nodeFs().lstatSync(manifestPath).mtimeMs;
    const counted = countedBytes(manifest);
    return {
      name,
      startedAtMs: runStartedAtMs(manifest) ?? writtenAtMs,
      bytes: counted === undefined ? folderBytes(dir) : counted + topLevelFileBytes(dir),
      complete: complete === true,
      writtenAtMs,
      pid: typeof pid === 'number' && Number.isInteger(pid) && pid > 0 ? pid : undefined,
      pidNamespace: typeof pidNamespace === 'string' ? pidNamespace : undefined,
    };
  } catch {
    return undefined;
  }
}

/**
 * The profile and span bytes run.json counts. The recorder keeps this exact (a run killed while
 * writing may hold one window more), and it spares reading thousands of file sizes at start.
 */
function countedBytes(manifest: object): number | undefined {
  const bytes = (manifest as { counts?: { bytes?: unknown } }).counts?.bytes;
  return typeof bytes === 'number' && Number.isFinite(bytes) && bytes >= 0 ? bytes : undefined;
}

/** run.json, a report.html and whatever else sits next to profiles/ and spans/. */
function topLevelFileBytes(dir: string): number {
  let bytes = 0;
  for (const entry of nodeFs().readdirSync(dir, { withFileTypes: true })) {
    if (entry.isFile()) bytes += fileSize(path.join(dir, entry.name));
  }
  return bytes;
}

/** Every file under `dir`, links not followed. */
function folderBytes(dir: string): number {
  let bytes = 0;
  for (const entry of nodeFs().readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) bytes += folderBytes(file);
    else if (entry.isFile()) bytes += fileSize(file);
  }
  return bytes;
}

function fileSize(file: string): number {
  try {
    return nodeFs().lstatSync(file).size;
  } catch {
    // Deleted while we looked (a window dropped by its own recorder's cap): it holds nothing now.
    return 0;
  }
}
