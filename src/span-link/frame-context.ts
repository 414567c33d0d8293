import type { AsyncLocalStorage } from 'node:async_hooks';
import type { Context } from '@opentelemetry/api';
import type { AsyncLocalStorageContextManager as ContextManagerBase } from '@opentelemetry/context-async-hooks';
import { AsyncContextManager } from '../context-manager.js';
import type { LabelRegistry, SpanLabels } from './labels.js';

/** The sampler's context slot in the async frame (AsyncContextFrame: Node 24+, or 22 with the flag). */
export interface FrameSlot {
  /** The key the sampler looks its holder up under in the current async frame. */
  readonly key: AsyncLocalStorage<object | undefined>;
  /** An object the sampler reads `labels` from when it finds it under `key`; undefined when not sampling. */
  holder(labels: SpanLabels): object | undefined;
}

type Token = ReturnType<ContextManagerBase['attach']>;

/**
 * OTel's own context manager, plus the sampler's frame key kept pointing at the holder of the
 * active span's labels (reference §3). OTel's context stays under OTel's key, untouched; the
 * sampler's key changes only when the labels do, which in a request is when its local root is
 * entered from outside (the request handler, the response's events) and when it is left, not at
 * every child span: an express request enters ~4 contexts, one per middleware span, all with the
 * root's labels.
 *
 * One holder per labels object, not per context: a @datadog/pprof holder is a native object with
 * two global handles and a weak callback, and making one per context entered cost ~5% of the CPU
 * of an express request (`perf record`, samples per request; docs/performance.md). The labels keep
 * their holder through a WeakRef: the holder keeps its labels through a strong global handle, so a
 * strong reference back would keep both forever.
 *
 * A span that has ended gets no holder: work still running in its context afterwards (a pooled
 * socket's handlers) is not the span's, which is also what `SpanLabels.covers` decides for samples.
 */
export class FrameLinkingContextManager extends AsyncContextManager {
  /** OTel's `with` as a plain function, for the sampler key's `run` to call without a closure per entry. */
  private readonly enter = (context: Context, fn: (...args: never[]) => unknown, thisArg: unknown, args: unknown[]) => super.with(context, fn as (...args: unknown[]) => unknown, thisArg, ...args);

  constructor(
    private readonly registry: LabelRegistry,
    private readonly slot: FrameSlot,
  ) {
    super();
  }

  override with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const holder = this.holderOf(context);
    const key = this.slot.key;
    if (key.getStore() === holder) return super.with(context, fn, thisArg, ...args);
    return key.run(holder, this.enter, context, fn, thisArg, args) as ReturnType<F>;
  }

  /** As OTel's, and the sampler's key set alongside; the token restores both, the sampler's last. */
  override attach(context: Context): Token {
    const holder = this.holderOf(context);
    const key = this.slot.key;
    if (key.getStore() === holder) return super.attach(context);
    const sampler = enterKey(key, holder);
    const otel = super.attach(context);
    return {
      dispose: () => {
        otel.dispose();
        sampler.dispose();
      },
    } as Token;
  }

  override disable(): this {
    this.slot.key.disable();
    return super.disable();
  }

  private holderOf(context: Context): object | undefined {
    const labels = this.registry.of(context);
    if (labels === undefined || labels.endedAtMicros !== undefined) return undefined;
    const kept = labels.frameHolder?.deref();
    if (kept !== undefined) return kept;
    const holder = this.slot.holder(labels);
    if (holder !== undefined) labels.frameHolder = new WeakRef(holder);
    return holder;
  }
}

/** `key` set to `store` until the token is disposed: `withScope` where Node has it (25.9+), else `enterWith` and back. */
function enterKey(key: AsyncLocalStorage<object | undefined>, store: object | undefined): Token {
  const scoped = key as AsyncLocalStorage<object | undefined> & { withScope?: (store: object | undefined) => Token };
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
  } as Token;
}
