import { createHook } from 'node:async_hooks';
import type { Context, ContextManagementToken, ContextManager } from '@opentelemetry/api';
import type { GlobalSlot } from '../profiling/sampler.js';
import { otelApi } from '../vendor.js';
import { type LabelRegistry, sampleContextOf, type SpanLabels } from './labels.js';
import { applyTo, claimForLinking, type Linking, type SampleOwner } from './linking.js';

type With = ContextManager['with'];

/**
 * Linking without AsyncContextFrame (Node 22 without `--experimental-async-context-frame`): the
 * sampler reads one global slot (@datadog/pprof time-profiler.js `setContext`), so the slot must
 * follow the context manager by hand — ours, or the one the app's own OpenTelemetry SDK registered, whose `with` and `attach` are
 * wrapped on the instance. The slot is set when a context is entered and restored when it is left,
 * re-set before every async callback runs (an async_hooks `before` hook, reading the manager linked
 * last, the one in charge) and cleared after it, so samples taken between callbacks carry no stale
 * span. Writes are skipped when the labels do not change. The owner of samples (for the client
 * hooks) writes the labels it is given for the length of a run, and restores the slot after it.
 */
export function slotLinker(registry: LabelRegistry, slot: GlobalSlot): Linking {
  /** Last value written to the slot. */
  let current: SpanLabels | undefined;
  let followed: ContextManager | undefined;
  let hook: ReturnType<typeof createHook> | undefined;

  const write = (labels: SpanLabels | undefined): void => {
    if (labels === current) return;
    current = labels;
    slot.set(labels && sampleContextOf(labels, slot));
  };
  /** Points the slot at the labels of whatever context is active right now. */
  const follow = (): void => write(followed === undefined ? undefined : registry.of(followed.active()));

  let runs = 0;
  const owner: SampleOwner = {
    current: () => registry.of(otelApi().context.active()),
    run(labels, fn, thisArg, args) {
      if (labels === undefined) return applyTo(fn, thisArg, args);
      const previous = current;
      runs++;
      write(labels);
      try {
        return applyTo(fn, thisArg, args);
      } finally {
        runs--;
        write(previous);
      }
    },
    switchTo(labels) {
      if (runs > 0 && labels !== undefined) write(labels);
    },
    sampled: () => (current?.endedAtMicros === undefined ? current : undefined),
    // The async hook's `after` clears the slot when the code running now ends.
    enter: (labels) => write(labels?.endedAtMicros === undefined ? labels : undefined),
  };

  const linkContext = (manager: ContextManager): void => {
    followed = manager;
    if (hook === undefined) {
      hook = createHook({ before: follow, after: () => write(undefined) });
      hook.enable();
    }
    if (!claimForLinking(manager)) return;
    const withContext = manager.with;
    manager.with = function linkedWith(context: Context, fn: (...args: unknown[]) => unknown, thisArg?: unknown, ...args: unknown[]) {
      const previous = current;
      write(registry.of(context));
      try {
        return withContext.call(manager, context, fn, thisArg, ...args);
      } finally {
        write(previous);
      }
    } as With;

    const attach = manager.attach;
    if (typeof attach !== 'function') return;
    manager.attach = function linkedAttach(context: Context): ContextManagementToken {
      const token = attach.call(manager, context);
      follow();
      return {
        dispose: () => {
          token.dispose();
          follow();
        },
      };
    };
  };
  return { linkContext, owner };
}
