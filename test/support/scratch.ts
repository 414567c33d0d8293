import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after } from 'node:test';

/**
 * A temp folder for one test file, removed when the file's tests end, and a function that hands
 * out a fresh subfolder per call. Call it at module scope of the test file.
 */
export function scratchDirs(prefix: string): { base: string; fresh: () => string } {
  const base = mkdtempSync(path.join(tmpdir(), prefix));
  after(() => rmSync(base, { recursive: true, force: true }));
  let counter = 0;
  return {
    base,
    fresh: () => {
      const dir = path.join(base, `t${++counter}`);
      mkdirSync(dir);
      return dir;
    },
  };
}
