import { createHook } from 'node:async_hooks';
import type { Context } from '@opentelemetry/api';
import type { AsyncLocalStorageContextManager as ContextManagerBase } from '@opentelemetry/context-async-hooks';
import { AsyncContextManager } from '../context-manager.js';
import type { LabelRegistry, SpanLabels } from './labels.js';

/** The sampler's one context slot, where there is no AsyncContextFrame to carry it. */
export interface GlobalSlot {
  /** Points the slot at `labels` from now on. */
  set(labels: SpanLabels | undefined): void;
}

/**
 * Linking without AsyncContextFrame (Node 22 without `--experimental-async-context-frame`;
 * reference §3): the sampler reads one global slot, so the slot must follow OTel's context by
 * hand. It is set when a context is entered and restored when it is left, re-set before every
 * async callback runs (an async_hooks `before` hook) and cleared after it, so samples taken
 * between callbacks carry no stale span. Writes are skipped when the labels do not change.
 */
export class GlobalSlotContextManager extends AsyncContextManager {
  private hook: ReturnType<typeof createHook> | undefined;
  /** Last value written to the slot. */
  private current: SpanLabels | undefined;

  constructor(
    private readonly registry: LabelRegistry,
    private readonly slot: GlobalSlot,
  ) {
    super();
  }

  override with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const previous = this.current;
    this.write(this.registry.of(context));
    try {
      return super.with(context, fn, thisArg, ...args);
    } finally {
      this.write(previous);
    }
  }

  override attach(context: Context): ReturnType<ContextManagerBase['attach']> {
    const token = super.attach(context);
    this.follow();
    return {
      dispose: () => {
        token.dispose();
        this.follow();
      },
    } as ReturnType<ContextManagerBase['attach']>;
  }

  override enable(): this {
    super.enable();
    if (this.hook === undefined) {
      this.hook = createHook({
        before: () => this.follow(),
        after: () => this.write(undefined),
      });
      this.hook.enable();
    }
    return this;
  }

  override disable(): this {
    this.hook?.disable();
    this.hook = undefined;
    return super.disable();
  }

  /** Points the slot at the labels of whatever context is active right now. */
  private follow(): void {
    this.write(this.registry.of(this.active()));
  }

  private write(labels: SpanLabels | undefined): void {
    if (labels === this.current) return;
    this.current = labels;
    this.slot.set(labels);
  }
}
