import type { SpanLabels } from '../../span-link/labels.js';
import type { SampleOwner } from '../../span-link/linking.js';

const isObject = (value: unknown): value is object => (typeof value === 'object' && value !== null) || typeof value === 'function';

/**
 * The tasks of worker pools, each with the span it was submitted in. A pool posts a task to a
 * worker when one is free, and that can be much later, from whatever the pool was doing then
 * (another task's result coming back): the message must carry the submitter's span, not the one
 * running at the post. Each pool's hook says which is which (its file says how): the task the
 * message holds was submitted in a span (`submitted`, `message.task` or `message.params` being the
 * object the app handed to the pool), or the pool posts a task whose submitter it knows
 * (`posting`).
 */
export class Submissions {
  private readonly byTask = new WeakMap<object, SpanLabels>();
  private postingFor: SpanLabels | undefined;

  constructor(private readonly owner: SampleOwner) {}

  /** The labels of the code running now, as a task submitted now keeps them. */
  current(): SpanLabels | undefined {
    return this.owner.sampled();
  }

  /** The app hands the pool `task` now (an object the pool's message will hold). */
  submitted(task: unknown): void {
    const labels = this.owner.sampled();
    if (labels !== undefined && isObject(task)) this.byTask.set(task, labels);
  }

  /** Runs `post` with what it posts sent for `labels`' span (none: as it would be). */
  posting<R>(labels: SpanLabels | undefined, post: () => R): R {
    if (labels === undefined) return post();
    const before = this.postingFor;
    this.postingFor = labels;
    try {
      return post();
    } finally {
      this.postingFor = before;
    }
  }

  /** Whose task a message posted now holds, if a pool's. */
  submitter(message: unknown): SpanLabels | undefined {
    if (this.postingFor !== undefined) return this.postingFor;
    if (!isObject(message)) return undefined;
    const { task, params } = message as { task?: unknown; params?: unknown };
    const key = isObject(task) ? task : params;
    return isObject(key) ? this.byTask.get(key) : undefined;
  }
}
