import type { PackageHooks } from '../../tracing/package-hooks.js';
import { wrapMethod } from '../../tracing/package-hooks.js';
import type { Submissions } from './submissions.js';

type Exec = (this: unknown, method: unknown, params?: unknown, options?: unknown) => unknown;

/**
 * workerpool 6 to 10, worker threads: `Pool.prototype.exec(method, params)` (src/Pool.js) queues
 * the task, and a worker is handed `{ id, method, params }` when free — `params`, the array the
 * app passed, names its submitter. A task posted at once is posted inside `exec`.
 */
export function workerpoolHooks(submissions: Submissions): PackageHooks {
  return {
    packages: [
      {
        name: 'workerpool',
        versions: ['>=6.0.0 <11'],
        files: {
          'src/Pool.js': (Pool) => {
            const proto = (Pool as { prototype?: object }).prototype;
            if (!proto) return;
            wrapMethod<Exec>(
              proto,
              'exec',
              (original) =>
                function exec(this: unknown, _method: unknown, params: unknown) {
                  submissions.submitted(params);
                  return submissions.posting(submissions.current(), () => original.apply(this, arguments as unknown as [unknown]));
                },
            );
          },
        },
      },
    ],
  };
}
