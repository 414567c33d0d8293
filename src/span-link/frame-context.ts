import type { AsyncLocalStorage } from 'node:async_hooks';
import type { Context } from '@opentelemetry/api';
import type { AsyncLocalStorageContextManager as ContextManagerBase } from '@opentelemetry/context-async-hooks';
import { otelApi, otelContextAsyncHooks } from '../vendor.js';
import type { LabelRegistry, SpanLabels } from './labels.js';

const { ROOT_CONTEXT } = otelApi();
const { AsyncLocalStorageContextManager } = otelContextAsyncHooks();

/** The sampler's context slot in the async frame (AsyncContextFrame: Node 24+, or 22 with the flag). */
export interface FrameSlot {
  /** The key the sampler looks its holder up under in the current async frame. */
  readonly key: AsyncLocalStorage<object>;
  /** An object the sampler reads `labels` from when it finds it under `key`; undefined when not sampling. */
  holder(labels: SpanLabels): object | undefined;
}

type Token = ReturnType<ContextManagerBase['attach']>;

/** On a holder: the OTel context it stands for. */
const CONTEXT = Symbol('pyro-run context');
/** On an OTel context: its holder, made the first time the context is entered. */
const HOLDER = Symbol('pyro-run holder');

interface Holder {
  [CONTEXT]: Context;
}

type Entered = Context & { [HOLDER]?: object };

/**
 * OTel's context manager, keeping its store where the sampler looks: under the sampler's frame key
 * (reference §3). A context whose span we labelled is stored as the sampler's holder of those
 * labels, carrying the context; any other context is stored as itself (the sampler finds no
 * holder there: its samples stay unlabelled). So entering a context is one async frame, exactly
 * as with OTel's own manager, and the labels follow `await`, timers and callbacks with it and
 * end with `with()`.
 *
 * Each labelled context gets one holder, made when it is first entered and kept on the context:
 * contexts are entered again and again (an emitter bound to a request's context enters it at
 * every event), and making a holder per entry is what doubled heap in dd-trace-js #8638. The
 * holder keeps its labels through a global handle, but nothing of ours points from the labels
 * back to a holder or a context, so both go with the context.
 */
export class FrameLinkingContextManager extends AsyncLocalStorageContextManager {
  constructor(
    private readonly registry: LabelRegistry,
    private readonly slot: FrameSlot,
  ) {
    super();
  }

  override active(): Context {
    const store = this.slot.key.getStore() as Context | Holder | undefined;
    if (store === undefined) return ROOT_CONTEXT;
    return (store as Partial<Holder>)[CONTEXT] ?? (store as Context);
  }

  override with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const callback = thisArg == null ? fn : (fn.bind(thisArg) as F);
    return this.slot.key.run(this.storeOf(context), callback, ...args);
  }

  /** As OTel's: `withScope` where Node has it (25.9+), else `enterWith` and a token that restores. */
  override attach(context: Context): Token {
    const key = this.slot.key as AsyncLocalStorage<object> & { withScope?: (store: object) => Token };
    const store = this.storeOf(context);
    if (key.withScope) return key.withScope(store);
    const previous = key.getStore();
    key.enterWith(store);
    let disposed = false;
    return {
      dispose: () => {
        if (disposed) return;
        disposed = true;
        key.enterWith(previous as object);
      },
    };
  }

  override disable(): this {
    this.slot.key.disable();
    return super.disable();
  }

  private storeOf(context: Entered): object {
    const cached = context[HOLDER];
    if (cached !== undefined) return cached;
    const labels = this.registry.of(context);
    const holder = labels === undefined ? undefined : (this.slot.holder(labels) as Holder | undefined);
    if (holder === undefined) return context;
    holder[CONTEXT] = context;
    // A frozen context (none of OTel's are) still works: it just gets a holder at every entry.
    if (Object.isExtensible(context)) context[HOLDER] = holder;
    return holder;
  }
}
