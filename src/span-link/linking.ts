import type { ContextManager } from '@opentelemetry/api';
import type { SpanLabels } from './labels.js';

/**
 * Makes a context manager carry span links to the sampler: ours, or the one the app's own
 * OpenTelemetry SDK registered. Linking the same manager again does nothing.
 */
export type LinkContext = (manager: ContextManager) => void;

/**
 * Whose samples the code running now takes, where the async context says the wrong thing: a pooled
 * client reads every reply on its socket in the context of whoever opened the connection, so the
 * client hooks (src/clients/) say instead whose reply is being read.
 */
export interface SampleOwner {
  /** The labels of the code running now: what a request hands to a client with its command. */
  current(): SpanLabels | undefined;
  /**
   * Runs `fn` with its samples labelled `labels` (none once that span ended); with `labels`
   * undefined — nobody waits for a reply — as they would be anyway.
   */
  run<R>(labels: SpanLabels | undefined, fn: (...args: never[]) => R, thisArg: unknown, args: ArrayLike<unknown>): R;
  /**
   * Inside `run`: from here on samples carry `labels` (a reply ended, the next one starts); with
   * `labels` undefined — nobody waits for another reply — they stay as they are.
   */
  switchTo(labels: SpanLabels | undefined): void;
  /** The labels samples taken now carry (none once that span ended): what a message posted now hands to the thread that receives it. */
  sampled(): SpanLabels | undefined;
  /**
   * From here to the end of the code running now (its callback, and what it schedules), samples
   * carry `labels`, or none: a message read synchronously (`receiveMessageOnPort`) hands its
   * sender's span to the code that reads it.
   */
  enter(labels: SpanLabels | undefined): void;
}

/** What linking gives the rest of pyro-run: the context manager's link, and the owner of samples for the client hooks. */
export interface Linking {
  linkContext: LinkContext;
  owner: SampleOwner;
}

const LINKED = Symbol('pyro-run linked context manager');

/** True the first time a manager is seen (it is marked as linked from then on). */
export function claimForLinking(manager: ContextManager): boolean {
  const marked = manager as ContextManager & { [LINKED]?: true };
  if (marked[LINKED]) return false;
  marked[LINKED] = true;
  return true;
}

/** `fn.apply(thisArg, args)` as a plain function, for AsyncLocalStorage.run to call without a closure per call. */
export const applyTo = <R>(fn: (...args: never[]) => R, thisArg: unknown, args: ArrayLike<unknown>): R =>
  (fn as (...a: unknown[]) => R).apply(thisArg, args as unknown[]);

/** Labels no sample: where samples cannot carry links (no sampler, or none that links), code runs as it is. */
export const NO_OWNER: SampleOwner = {
  current: () => undefined,
  run: (_labels, fn, thisArg, args) => applyTo(fn, thisArg, args),
  switchTo: () => undefined,
  sampled: () => undefined,
  enter: () => undefined,
};
