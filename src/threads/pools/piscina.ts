import type { PackageHooks } from '../../tracing/package-hooks.js';
import { wrapMethod } from '../../tracing/package-hooks.js';
import type { SpanLabels } from '../../span-link/labels.js';
import type { Submissions } from './submissions.js';

/** On a piscina TaskInfo: the labels of the code that submitted it. */
const SUBMITTER = Symbol('pyro-run pool task submitter');
type Tagged = { [SUBMITTER]?: SpanLabels };
type Constructor = new (...args: unknown[]) => object;

/**
 * piscina 5: `run()` makes a TaskInfo (dist/task_queue/index.js) for the task at once, in the
 * caller's context, and a WorkerInfo posts it (`postTask`, dist/worker_pool/index.js) when a
 * worker is free: at once, or from the queue when another task's result comes back. The TaskInfo
 * keeps its submitter's labels, and the post carries them, whatever the task is (a number too).
 */
export function piscinaHooks(submissions: Submissions): PackageHooks {
  return {
    packages: [
      {
        name: 'piscina',
        versions: ['>=5.0.0 <6'],
        files: {
          'dist/task_queue/index.js': (exports) => {
            const holder = exports as { TaskInfo?: Constructor };
            const TaskInfo = holder.TaskInfo;
            if (typeof TaskInfo !== 'function') return;
            // A subclass named as the original: piscina makes every task through this export.
            holder.TaskInfo = class TaskInfo extends (holder.TaskInfo as Constructor) {
              constructor(...args: unknown[]) {
                super(...args);
                (this as Tagged)[SUBMITTER] = submissions.current();
              }
            };
          },
          'dist/worker_pool/index.js': (exports) => {
            const proto = (exports as { WorkerInfo?: { prototype?: object } }).WorkerInfo?.prototype;
            if (!proto) return;
            wrapMethod<(this: unknown, task: Tagged) => unknown>(
              proto,
              'postTask',
              (original) =>
                function postTask(this: unknown, task: Tagged) {
                  return submissions.posting(task?.[SUBMITTER], () => original.call(this, task));
                },
            );
          },
        },
      },
    ],
  };
}
