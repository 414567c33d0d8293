import { reason } from '../../log.js';

/** The errno code of a file-system error (`ENOSPC`, `EROFS` …); undefined for anything else. */
export const errorCode = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | undefined)?.code;

/** A full disk (or quota): worth trying again later, unlike a folder we may not write at all. */
export function isDiskFull(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/**
 * What went wrong writing a recording, in words that say what to do: the error's own message
 * for the rare cases, and for a folder we may not write, the folder and the way out. `folder`
 * names the place (default: the path the error names), so that a failed write names the run
 * folder rather than a temporary file in it. The errno stays in the text, for searching.
 */
export function describeDiskError(error: unknown, folder?: string): string {
  const code = errorCode(error);
  const where = folder ?? (error as NodeJS.ErrnoException | undefined)?.path;
  if (where === undefined) return reason(error);
  switch (code) {
    case 'EROFS':
      return `${where} is on a read-only file system (EROFS); record into a writable folder with --out <dir> (PYRO_RUN_OUTPUT_DIR)`;
    case 'EACCES':
    case 'EPERM':
      return `${where} is read-only for this process, no permission to write there (${code}); record into a writable folder with --out <dir> (PYRO_RUN_OUTPUT_DIR)`;
    case 'ENOSPC':
    case 'EDQUOT':
      return `the disk holding ${where} is full (${code})`;
    case 'EEXIST':
      return `${where} is a file, not a folder (${code}); record into a folder with --out <dir> (PYRO_RUN_OUTPUT_DIR)`;
    case 'ENOTDIR':
      return `a part of ${where} is a file, not a folder (${code}); record into a folder with --out <dir> (PYRO_RUN_OUTPUT_DIR)`;
    default:
      return reason(error);
  }
}
