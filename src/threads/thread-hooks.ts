import type { Logger } from '../log.js';
import type { SpanLabels } from '../span-link/labels.js';
import type { SampleOwner } from '../span-link/linking.js';
import { linkMessages } from './message-links.js';
import { EVERY_THREAD_UNWRAPS, type ThreadsShared, type ToMain } from './protocol.js';
import type { SpanDirectory } from './span-directory.js';
import { spawnWithAgent } from './worker-spawn.js';

export interface ThreadHookParts {
  shared: ThreadsShared;
  owner: SampleOwner;
  directory: SpanDirectory;
  log: Logger;
  /** Who submitted a pool's task the message holds (pools/). */
  submitter?: (message: unknown) => SpanLabels | undefined;
  /** The labels the app's own tracing says run now. */
  ownLabels: () => SpanLabels | undefined;
  /** The app posted a message. */
  afterPost?: () => void;
  /** The app terminated a worker. */
  terminated: (threadId: number) => void;
  /** Takes the other agents' messages (the main thread's). */
  ownMessages?: (message: ToMain) => void;
}

/**
 * What every thread with an agent does alike: messages carry their sender's span
 * (message-links.ts), and the workers it starts run the preload (worker-spawn.ts). The patched
 * exports of node:worker_threads are pushed to its ES module namespace, for apps that import it.
 */
export function hookThread(parts: ThreadHookParts): void {
  const { flags } = parts.shared;
  linkMessages({
    owner: parts.owner,
    directory: parts.directory,
    mayWrap: () => Atomics.load(flags, EVERY_THREAD_UNWRAPS) === 1,
    submitter: parts.submitter ?? (() => undefined),
    ownLabels: parts.ownLabels,
    afterPost: parts.afterPost,
    ownMessages: parts.ownMessages,
  });
  spawnWithAgent({ log: parts.log, unwrapLost: () => Atomics.store(flags, EVERY_THREAD_UNWRAPS, 0), terminated: parts.terminated });
  (process.getBuiltinModule('node:module') as typeof import('node:module')).syncBuiltinESMExports();
}
