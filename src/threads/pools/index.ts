import { type Logger, reason } from '../../log.js';
import type { SpanLabels } from '../../span-link/labels.js';
import type { SampleOwner } from '../../span-link/linking.js';
import { installPackageHooks } from '../../tracing/package-hooks.js';
import { piscinaHooks } from './piscina.js';
import { Submissions } from './submissions.js';
import { tinypoolHooks } from './tinypool.js';
import { workerpoolHooks } from './workerpool.js';

/** Worker pools whose tasks carry the span they were submitted in, whenever the pool posts them. */
export interface Pools {
  /** The labels of whoever submitted the task a message holds, if a pool's. */
  submitter(message: unknown): SpanLabels | undefined;
}

/** One file per pool; each says what it patches and why there. */
export function startPoolHooks(owner: SampleOwner, log: Logger): Pools {
  const submissions = new Submissions(owner);
  installPackageHooks('pools', [piscinaHooks(submissions), tinypoolHooks(submissions), workerpoolHooks(submissions)], (pkg, error) =>
    log.warnOnce(
      `pool-hooks:${pkg}`,
      `could not follow ${pkg}'s tasks to the spans that submitted them (${reason(error)}); a queued task's work carries the span running when it is posted`,
    ),
  );
  return { submitter: (message) => submissions.submitter(message) };
}
