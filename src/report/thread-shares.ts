/**
 * How a run's work split between its threads — by CPU, or by wall time when no CPU was recorded —
 * as the summary's and the page's "time by thread" line say it. Pure, and free of Node's APIs: the
 * page's bundle imports it too.
 */
import type { ThreadStats } from './aggregate.js';

export interface ThreadShares {
  measure: 'CPU' | 'Wall';
  /** Each thread's value of that measure, in the run's order of threads. */
  threads: { name: string; value: number }[];
  whole: number;
}

/** Undefined for a run without workers, or one with no time on any thread. */
export function threadShares(threads: readonly ThreadStats[] | undefined): ThreadShares | undefined {
  if (threads === undefined) return undefined;
  const byCpu = threads.reduce((n, thread) => n + thread.cpuNs, 0) > 0;
  const shares = threads.map((thread) => ({ name: thread.name, value: byCpu ? thread.cpuNs : thread.wallNs }));
  const whole = shares.reduce((n, share) => n + share.value, 0);
  if (whole <= 0) return undefined;
  return { measure: byCpu ? 'CPU' : 'Wall', threads: shares, whole };
}
