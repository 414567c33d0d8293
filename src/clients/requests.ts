import type { SpanLabels } from '../span-link/labels.js';
import type { SampleOwner } from '../span-link/linking.js';
import { otelApi } from '../vendor.js';

/** The labels of the request that handed a client a command, kept on the command object. */
const LABELS = Symbol('pyro-run request labels');

type Tagged = { [LABELS]?: SpanLabels | undefined };

/** Tags `command` with the labels of the code running now, once: a command is the request's that made it. */
export function tagCommand(command: unknown, owner: SampleOwner): void {
  if (typeof command !== 'object' || command === null) return;
  const tagged = command as Tagged;
  if (!(LABELS in tagged)) tagged[LABELS] = owner.current();
}

/** The labels a command was tagged with; undefined for none or no command. */
export function labelsOf(command: unknown): SpanLabels | undefined {
  return typeof command === 'object' && command !== null ? (command as Tagged)[LABELS] : undefined;
}

const OWNED = Symbol('pyro-run owned reads');

/**
 * Runs every read event of a client's socket — 'data', or 'readable' for a client that pulls — and
 * so the client's parsing of what it read, with the samples of the request whose reply comes next
 * (`replyOwner()`, asked at each event) instead of the async context the socket was opened in. The
 * socket's `emit` is wrapped on the instance: the stream machinery emits through it.
 */
export function ownReads(stream: unknown, replyOwner: () => SpanLabels | undefined, owner: SampleOwner, readEvent: 'data' | 'readable' = 'data'): void {
  if (typeof stream !== 'object' || stream === null) return;
  const target = stream as { emit?: (...args: unknown[]) => boolean; [OWNED]?: true };
  const emit = target.emit;
  if (typeof emit !== 'function' || target[OWNED]) return;
  target[OWNED] = true;
  target.emit = function ownedEmit(this: unknown, event: unknown) {
    if (event !== readEvent) return emit.apply(this, arguments as unknown as unknown[]);
    return owner.run(replyOwner(), emit, this, arguments);
  };
}

/** `fn` bound to the OpenTelemetry context active now (and so to its samples), as OTel's instrumentations bind callbacks. */
export function bindToCaller<F>(fn: F): F {
  const { context } = otelApi();
  return typeof fn === 'function' ? context.bind(context.active(), fn) : fn;
}
