import type { ContextManager } from '@opentelemetry/api';

/**
 * Makes a context manager carry span links to the sampler: ours, or the one the app's own
 * OpenTelemetry SDK registered. Linking the same manager again does nothing.
 */
export type LinkContext = (manager: ContextManager) => void;

const LINKED = Symbol('pyro-run linked context manager');

/** True the first time a manager is seen (it is marked as linked from then on). */
export function claimForLinking(manager: ContextManager): boolean {
  const marked = manager as ContextManager & { [LINKED]?: true };
  if (marked[LINKED]) return false;
  marked[LINKED] = true;
  return true;
}
