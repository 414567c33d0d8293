import path from 'node:path';
import { nodeFs } from '../../util/builtins.js';
import { PROFILES_DIR, runFolderName, SPANS_DIR } from '../../recording.js';
import { errorCode } from './disk-error.js';

/** Names tried after the plain one before giving up: far more replicas than start in one second. */
const MAX_ATTEMPTS = 1000;

/**
 * `mkdir -p` that fails with the real reason. Node's recursive mkdir reports ENOENT for a folder
 * on a read-only file system or in a folder we may not write (it stats the folder it could not
 * create, finds nothing, and returns that), and it spins forever under /proc. Here each level is
 * created on its own, and each level at most twice, so the error is the kernel's (EROFS, EACCES).
 */
export function ensureFolder(dir: string): void {
  const parent = path.dirname(dir);
  if (makeLevel(dir, parent === dir)) return;
  ensureFolder(parent);
  makeLevel(dir, true);
}

/** One level: true when the folder is there now (made, or made by someone else meanwhile), false when its parent is missing. */
function makeLevel(dir: string, lastTry: boolean): boolean {
  try {
    nodeFs().mkdirSync(dir);
    return true;
  } catch (error) {
    const code = errorCode(error);
    if (code === 'EEXIST' && nodeFs().statSync(dir).isDirectory()) return true;
    if (code === 'ENOENT' && !lastTry) return false;
    throw error;
  }
}

/**
 * Creates this run's folder in `baseDir` and returns it. The folder is created exclusively: a name
 * that is taken — by a replica that is also PID 1 and started in the same second, or by anything
 * else — is never shared; the next name (`-2`, `-3` …) is tried instead.
 */
export function createRunFolder(baseDir: string, service: string, startedAt: Date, pid: number): string {
  ensureFolder(baseDir);
  for (let attempt = 1; ; attempt++) {
    const dir = path.join(baseDir, runFolderName(service, startedAt, pid, attempt));
    try {
      nodeFs().mkdirSync(dir);
    } catch (error) {
      if (errorCode(error) === 'EEXIST' && attempt < MAX_ATTEMPTS) continue;
      throw error;
    }
    nodeFs().mkdirSync(path.join(dir, PROFILES_DIR));
    nodeFs().mkdirSync(path.join(dir, SPANS_DIR));
    return dir;
  }
}
