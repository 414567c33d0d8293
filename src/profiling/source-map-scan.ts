import type { Dir } from 'node:fs';
import path from 'node:path';
import { nodeFsPromises } from '../util/builtins.js';

/** Folders the source mapper skips too: dependencies ship their own maps rarely and cost a long walk. */
const SKIPPED_DIRS = new Set(['node_modules', '.git']);
const MAP_FILE = /\.[cm]?js\.map$/;
const JS_FILE = /\.[cm]?js$/;
const ANNOTATION = 'sourceMappingURL=';
/** Bytes read from the end of a JS file: compilers put the annotation on the last line. */
const TAIL_BYTES = 512;
/** After this many JS files without a sign of maps the walk gives up and says "maybe". */
const MAX_FILES = 5000;

/**
 * Whether the app under `dir` may have source maps: a `.js.map` file, or a JS file whose last line
 * names one (inline `data:` maps included). The source mapper itself loads the `source-map` package
 * (~5 MB and ~100 ms of the app's start), so it is loaded only when this says yes. Anything
 * unreadable is skipped; a walk too long to finish answers yes, so that no map is ever missed.
 */
export async function mayHaveSourceMaps(dir: string): Promise<boolean> {
  let seen = 0;
  const pending = [dir];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    let entries: Dir;
    try {
      entries = await nodeFsPromises().opendir(next);
    } catch {
      continue;
    }
    for await (const entry of entries) {
      const full = path.join(next, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) pending.push(full);
      } else if (MAP_FILE.test(entry.name)) {
        return true; // leaving the loop closes the directory
      } else if (JS_FILE.test(entry.name) && (++seen > MAX_FILES || (await tailNamesMap(full)))) {
        return true;
      }
    }
  }
  return false;
}

async function tailNamesMap(file: string): Promise<boolean> {
  try {
    const handle = await nodeFsPromises().open(file, 'r');
    try {
      const { size } = await handle.stat();
      const length = Math.min(size, TAIL_BYTES);
      const buffer = Buffer.alloc(length);
      await handle.read(buffer, 0, length, size - length);
      return buffer.toString('latin1').includes(ANNOTATION);
    } finally {
      await handle.close();
    }
  } catch {
    return false;
  }
}
