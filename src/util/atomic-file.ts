import path from 'node:path';
import { nodeFs } from './builtins.js';
import { randomHex } from './random.js';

let written = 0;

/**
 * Writes a file so that readers (and a crash at any instant, SIGKILL included) only ever see it
 * whole: the bytes go to `.<name>.<pid>-<n><random>.tmp` in the same folder, then a rename puts
 * them in place, which is atomic within one file system. The temporary name is unique per write:
 * two processes (two replicas that are both PID 1, say) never write into each other's. When the
 * write fails — a full disk takes the bytes up to the last block that fit — the temporary file
 * is removed before the error is passed on, so a failure leaves the disk as it was.
 */
export function writeFileAtomicSync(file: string, data: string | Uint8Array, mode?: number): void {
  const unique = `${process.pid}-${(++written).toString(36)}${randomHex(3)}`;
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${unique}.tmp`);
  try {
    nodeFs().writeFileSync(tmp, data, mode === undefined ? undefined : { mode });
    nodeFs().renameSync(tmp, file);
  } catch (error) {
    removeQuietly(tmp);
    throw error;
  }
}

/** Removes a file or folder if it is there; what cannot be removed is left (the error that led here is the one to report). */
export function removeQuietly(target: string): void {
  try {
    nodeFs().rmSync(target, { recursive: true, force: true });
  } catch {
    // Nothing more to do: readers skip dot-files, and the caller reports the first error.
  }
}
