import type { AsyncLocalStorage } from 'node:async_hooks';
import type { Context, ContextManagementToken, ContextManager } from '@opentelemetry/api';
import type { ContextHolder, FrameSlot } from '../profiling/sampler.js';
import { otelApi } from '../vendor.js';
import { type LabelRegistry, type SampleContext, sampleContextOf, type SpanLabels } from './labels.js';
import { applyTo, claimForLinking, type Linking, type SampleOwner } from './linking.js';

type With = ContextManager['with'];

type Enter = (context: Context, fn: (...args: unknown[]) => unknown, thisArg: unknown, args: unknown[]) => unknown;

/**
 * Linking with AsyncContextFrame (Node 24+; @datadog/pprof's sampler reads the context it keeps under a key of ours, its `useCPED` option): whatever context manager runs — ours, or the one
 * the app's own OpenTelemetry SDK registered — keeps its context under its own key, untouched, and
 * the sampler's frame key is kept pointing at the holder of the active span's labels. The key
 * changes only when the labels do, which in a request is when its local root is entered from
 * outside (the request handler, the response's events) and when it is left, not at every child
 * span: an express request enters ~4 contexts, one per middleware span, all with the root's labels.
 *
 * The manager's own `with` and `attach` are wrapped on the instance: its `bind`, and OTel's binding
 * of event emitters, call `this.with`, so every way into a context goes through them. The app's
 * manager can only be linked so, and pyro-run's own is linked the same way, so that linking is one
 * piece of code whichever manager runs.
 *
 * One holder per labels object, not per context: a @datadog/pprof holder is a native object with
 * two global handles and a weak callback, and making one per context entered showed in the CPU of
 * every request (docs/performance.md, "CPU per request"). The labels keep
 * their holder through a WeakRef, and only while their span runs (SpanLabels.frameHolder): the
 * holder keeps its value — the labels' SampleContext, which keeps the labels — through a strong
 * global handle, so a strong reference back would keep both forever.
 *
 * A span that has ended gets no holder: work still running in its context afterwards (a pooled
 * socket's handlers) is not the span's, which is also what `SpanLabels.covers` decides for samples.
 *
 * The owner of samples (for the client hooks) runs code under the key with the holder of the
 * labels it is given, and switches the key in place within that run.
 */
export function frameLinker(registry: LabelRegistry, slot: FrameSlot): Linking {
  /** Labels that get a holder: those of a span still running (see above). */
  const running = (labels: SpanLabels | undefined): labels is SpanLabels => labels !== undefined && labels.endedAtMicros === undefined;
  /** The labels of the holder in the key now (the addon keeps its value at the holder's index 0). */
  const heldNow = (): SpanLabels | undefined => ((slot.key.getStore() as ContextHolder | undefined)?.[0] as SampleContext | undefined)?.labels;
  const holderFor = (labels: SpanLabels | undefined): object | undefined => {
    if (!running(labels)) return undefined;
    const kept = labels.frameHolder?.deref();
    if (kept !== undefined) return kept;
    const holder = slot.holder(sampleContextOf(labels, slot));
    if (holder !== undefined) labels.frameHolder = new WeakRef(holder);
    return holder;
  };
  /**
   * Whether the key already holds what `labels` call for — their holder while their span runs,
   * none otherwise — read off the holder in the key, not through the labels' WeakRef: every
   * `deref` adds its target to V8's kept-objects set, and most entries find the key set already.
   */
  const keyHolds = (labels: SpanLabels | undefined): boolean => heldNow() === (running(labels) ? labels : undefined);

  /** How many owner runs are under way: a switch outside one would change the caller's own frame. */
  let runs = 0;
  const owner: SampleOwner = {
    current: () => registry.of(otelApi().context.active()),
    run(labels, fn, thisArg, args) {
      if (labels === undefined) return applyTo(fn, thisArg, args);
      runs++;
      try {
        return slot.key.run(holderFor(labels), applyTo, fn, thisArg, args);
      } finally {
        runs--;
      }
    },
    switchTo(labels) {
      if (runs === 0 || labels === undefined || keyHolds(labels)) return;
      slot.key.enterWith(holderFor(labels));
    },
    sampled() {
      const labels = heldNow();
      return running(labels) ? labels : undefined;
    },
    enter(labels) {
      if (!keyHolds(labels)) slot.key.enterWith(holderFor(labels));
    },
  };

  const linkContext = (manager: ContextManager): void => {
    if (!claimForLinking(manager)) return;
    const withContext = manager.with;
    // The manager's `with` as a plain function of four arguments, for the key's `run` to call without a closure per entry.
    const enter: Enter = (context, fn, thisArg, args) => withContext.call(manager, context, fn, thisArg, ...args);
    manager.with = function linkedWith(context: Context, fn: (...args: unknown[]) => unknown, thisArg?: unknown, ...args: unknown[]) {
      const labels = registry.of(context);
      if (keyHolds(labels)) return withContext.call(manager, context, fn, thisArg, ...args);
      return slot.key.run(holderFor(labels), enter, context, fn, thisArg, args);
    } as With;

    const attach = manager.attach;
    if (typeof attach !== 'function') return;
    // As the manager's, and the sampler's key set alongside; the token restores both, the sampler's last.
    manager.attach = function linkedAttach(context: Context): ContextManagementToken {
      const labels = registry.of(context);
      if (keyHolds(labels)) return attach.call(manager, context);
      const sampler = enterKey(slot.key, holderFor(labels));
      const own = attach.call(manager, context);
      return {
        dispose: () => {
          own.dispose();
          sampler.dispose();
        },
      };
    };
  };
  return { linkContext, owner };
}

/** `key` set to `store` until the token is disposed: `withScope` where Node has it (25.9+), else `enterWith` and back. */
function enterKey(key: AsyncLocalStorage<object | undefined>, store: object | undefined): ContextManagementToken {
  const scoped = key as AsyncLocalStorage<object | undefined> & { withScope?: (store: object | undefined) => ContextManagementToken };
  if (scoped.withScope) return scoped.withScope(store);
  const previous = key.getStore();
  key.enterWith(store);
  let disposed = false;
  return {
    dispose: () => {
      if (disposed) return;
      disposed = true;
      key.enterWith(previous);
    },
  };
}
