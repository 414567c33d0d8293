import { createHook } from 'node:async_hooks';
import type { Context } from '@opentelemetry/api';
import type { AsyncLocalStorageContextManager as ContextManagerBase } from '@opentelemetry/context-async-hooks';
import { otelApi, otelContextAsyncHooks } from '../vendor.js';
import type { LabelRegistry, SpanLabels } from './labels.js';

const { trace } = otelApi();
const { AsyncLocalStorageContextManager } = otelContextAsyncHooks();

/** Where the labels of the running code go: the sampler's context slot. */
export interface LabelSink {
  /** Points the slot at `labels` from now on (the global slot, or the current async frame). */
  set(labels: SpanLabels | undefined): void;
  /**
   * Runs `fn` in a new async frame whose slot holds `labels`, and leaves it with `fn`: the frame
   * that was current before is current again afterwards, slot included (AsyncContextFrame only).
   */
  runWith<T>(labels: SpanLabels | undefined, fn: () => T): T;
}

/**
 * The OTel context manager, plus: whenever code enters a context whose labelling span differs from
 * the current one, the sampler's context is switched to match. Two regimes (reference §3):
 *
 * - AsyncContextFrame active (Node 24+, or 22 with the flag): the sampler's context lives in the
 *   async frame next to OTel's own store and follows `await`, timers and callbacks by itself. We
 *   enter a frame of its own only when the span changes — calling it on every switch is what
 *   doubled heap in dd-trace-js #8638 — and leave it when `with()` returns. Setting the slot in
 *   place inside OTel's frame would not do: leaving that frame copies the current one (Node's
 *   AsyncLocalStorage.run restores with `enterWith(prior)`), so the span's labels would stay on
 *   the code after `with()` and on every callback it schedules.
 * - No AsyncContextFrame: the sampler has one global slot. It is set when a context is entered
 *   and restored when it is left, and re-set before every async callback runs (an async_hooks
 *   `before` hook), then cleared after it, so samples between callbacks carry no stale span.
 */
export class LinkingContextManager extends AsyncLocalStorageContextManager {
  private hook: ReturnType<typeof createHook> | undefined;
  /** Last value written to the global slot (no-ACF regime): writes are skipped when unchanged. */
  private current: SpanLabels | undefined;

  constructor(
    private readonly registry: LabelRegistry,
    private readonly sink: LabelSink,
    private readonly frameCarriesContext: boolean,
  ) {
    super();
  }

  private labelsOf(context: Context): SpanLabels | undefined {
    const span = trace.getSpan(context);
    return span === undefined ? undefined : this.registry.get(span);
  }

  override with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const next = this.labelsOf(context);
    if (this.frameCarriesContext) {
      if (next === this.labelsOf(this.active())) return super.with(context, fn, thisArg, ...args);
      return this.sink.runWith(next, () => super.with(context, fn, thisArg, ...args));
    }
    const previous = this.current;
    this.write(next);
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
    if (!this.frameCarriesContext && this.hook === undefined) {
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

  /** Points the sampler at the labels of whatever context is active right now. */
  private follow(): void {
    const labels = this.labelsOf(this.active());
    if (this.frameCarriesContext) this.sink.set(labels);
    else this.write(labels);
  }

  private write(labels: SpanLabels | undefined): void {
    if (labels === this.current) return;
    this.current = labels;
    this.sink.set(labels);
  }
}
