import path from 'node:path';
import { nodeFs } from '../builtins.js';

/**
 * Writes a file so that readers (and a crash at any instant, SIGKILL included) only ever see it
 * whole: the bytes go to `.<name>.tmp` in the same folder, then a rename puts them in place,
 * which is atomic within one file system.
 */
export function writeFileAtomicSync(file: string, data: string | Uint8Array): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.tmp`);
  nodeFs().writeFileSync(tmp, data);
  nodeFs().renameSync(tmp, file);
}
