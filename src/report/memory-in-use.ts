/**
 * The line on a memory snapshot, the same in the summary and on the page, which each say the
 * value and the top functions their own way. Pure, and free of Node's APIs: the page's bundle
 * imports it too.
 */
import type { Snapshot } from './aggregate.js';

/** `Memory in use at the last window: 72.9MB, allocated in retain_in_use 94%`. */
export function memoryInUseText(snapshot: Pick<Snapshot, 'outOfMemoryAt'>, value: string, top: string): string {
  const when = snapshot.outOfMemoryAt === undefined ? 'at the last window' : `when the heap limit was hit (${snapshot.outOfMemoryAt})`;
  return `Memory in use ${when}: ${value}${top ? `, allocated in ${top}` : ''}`;
}
