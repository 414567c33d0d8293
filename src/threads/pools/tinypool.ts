import type { PackageHooks } from '../../tracing/package-hooks.js';
import { wrapMethod } from '../../tracing/package-hooks.js';
import type { Submissions } from './submissions.js';

type Run = (this: unknown, task: unknown, options?: unknown) => unknown;

/**
 * tinypool 1 and 2 (vitest's pool): one ES module whose task and worker classes are its own, so
 * the hook is on the public `run(task, options)`: a task posted at once is posted inside it; one
 * that waits for a worker is posted later as `{ task, … }`, and the task object the app handed
 * over names its submitter (a task that is not an object and waits is posted in whatever runs
 * then).
 */
export function tinypoolHooks(submissions: Submissions): PackageHooks {
  return {
    packages: [
      {
        name: 'tinypool',
        versions: ['>=1.0.0 <3'],
        main: (exports) => {
          const proto = (exports as { Tinypool?: { prototype?: object } }).Tinypool?.prototype;
          if (!proto) return;
          wrapMethod<Run>(
            proto,
            'run',
            (original) =>
              function run(this: unknown, task: unknown) {
                submissions.submitted(task);
                return submissions.posting(submissions.current(), () => original.apply(this, arguments as unknown as [unknown]));
              },
          );
        },
      },
    ],
  };
}
