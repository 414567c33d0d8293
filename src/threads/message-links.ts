import type { ShippedLabels } from '../profiling/fold-shipment.js';
import type { SpanLabels } from '../span-link/labels.js';
import type { SampleOwner } from '../span-link/linking.js';
import { isOwn, type ToMain } from './protocol.js';
import type { SpanDirectory } from './span-directory.js';

/**
 * Work a thread does for a message carries the span of whoever posted it. A message posted while a
 * span runs (or a pool's task submitted in one, pools/) crosses in an envelope that holds the
 * span's labels; the receiving thread takes the envelope off before anything of the app's sees the
 * message, and runs the app's listeners with the span's labels on the samples:
 *
 * - out: a Worker's `postMessage`, and `MessagePort.prototype.postMessage` for the app's ports
 *   (a worker's `parentPort`, MessageChannels; not BroadcastChannels, whose other ends are many);
 * - in: the dispatch every MessagePort's messages go through (Node's per-context `emitMessage`
 *   calls `port[Symbol.for('nodejs.internal.kHybridDispatch')]`, lib/internal/per_context/
 *   messageport.js), and `receiveMessageOnPort`, whose reader takes the span from there on. The
 *   dispatch also takes the agents' own messages (protocol.ts) off to pyro-run.
 *
 * The listeners get the very message posted (a structured clone of it, as always); an envelope is
 * only ever sent while every thread of the process takes envelopes off (`mayWrap`: each runs the
 * agent's preload, worker-spawn.ts, but for pyro-run's own merge thread, which takes them off
 * itself: withoutEnvelope), and a message the receiving side would not recognise as ours
 * cannot be forged by an app (the tag starts with a NUL).
 */

/** First element of an envelope: `[ENVELOPE, labels, message]`. */
const ENVELOPE = '\u0000pyro-run:span:1';
type Envelope = [typeof ENVELOPE, ShippedLabels, unknown];

const isPlainObject = (value: unknown): value is object => {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};
const isEnvelope = (value: unknown): value is Envelope => Array.isArray(value) && value.length === 3 && value[0] === ENVELOPE;

/**
 * The message as it was posted, out of its envelope if it came in one: for a thread that takes
 * envelopes off without this thread's hooks (pyro-run's own merge thread, export/local/merge-worker.ts).
 */
export function withoutEnvelope(value: unknown): unknown {
  return isEnvelope(value) ? value[2] : value;
}

/** Where Node's MessagePort dispatches a message to its listeners (lib/internal/event_target.js). */
const HYBRID_DISPATCH = Symbol.for('nodejs.internal.kHybridDispatch');

type Dispatch = (this: unknown, value: unknown, type: string, event: unknown) => unknown;
type PostMessage = (this: unknown, ...args: unknown[]) => unknown;

export interface MessageLinkParts {
  owner: SampleOwner;
  directory: SpanDirectory;
  /** Whether envelopes may be sent: every thread takes them off. */
  mayWrap: () => boolean;
  /** Who submitted a pool's task, by the task the message holds (pools/). */
  submitter: (message: unknown) => SpanLabels | undefined;
  /** The labels the app's own tracing says run now, for a message read without an envelope. */
  ownLabels: () => SpanLabels | undefined;
  /** Called after each message the app posts. */
  afterPost: (() => void) | undefined;
  /** Takes the messages of other threads' agents (protocol.ts); without it they are dropped. */
  ownMessages: ((message: ToMain) => void) | undefined;
}

/** Set on a MessagePort while Node dispatches a message to it: the ports the message transferred (lib/internal/per_context/messageport.js). */
const RECEIVING_PORTS = Symbol.for('nodejs.internal.kCurrentlyReceivingPorts');

/**
 * Installs both directions in this thread. Only ports the app
 * holds carry envelopes: a Worker's (its `postMessage`), a worker's `parentPort`, the ports of the
 * MessageChannels the app makes (the exported constructor marks them) and the ports it receives
 * from another thread. Node's own ports — a worker's start-up, its stdio — are left alone: they are
 * made by Node's internal MessageChannel, and the receiving side reads them before any preload.
 */
export function linkMessages(parts: MessageLinkParts): void {
  const { owner, directory, mayWrap, submitter, ownLabels, afterPost, ownMessages } = parts;
  const threads = process.getBuiltinModule('node:worker_threads') as typeof import('node:worker_threads');
  const { MessagePort } = threads;
  const port = MessagePort.prototype as unknown as Record<PropertyKey, unknown> & { postMessage: PostMessage };
  const worker = threads.Worker.prototype as unknown as { postMessage: PostMessage };

  const publicPorts = new WeakSet<object>();
  const markPublic = (value: unknown): void => {
    if (value instanceof MessagePort) publicPorts.add(value);
  };
  if (threads.parentPort) markPublic(threads.parentPort);

  const sender = (message: unknown): SpanLabels | undefined => submitter(message) ?? owner.sampled();
  /** Posts `args` through `post`, the message in an envelope when a span sends it. */
  const postLinked = (post: PostMessage, target: unknown, args: IArguments): unknown => {
    const labels = args.length > 0 && mayWrap() ? sender(args[0]) : undefined;
    const posted = Reflect.apply(
      post,
      target,
      labels === undefined ? args : [[ENVELOPE, directory.handOver(labels), args[0]] satisfies Envelope, ...Array.prototype.slice.call(args, 1)],
    );
    afterPost?.();
    return posted;
  };

  const postToPort = port.postMessage;
  port.postMessage = function postMessage(this: unknown) {
    return publicPorts.has(this as object) ? postLinked(postToPort, this, arguments) : Reflect.apply(postToPort, this, arguments);
  };
  // A Worker's own port is made by Node's internal MessageChannel: its posts are linked here.
  const postToWorker = worker.postMessage;
  worker.postMessage = function postMessage(this: unknown) {
    return postLinked(postToWorker, this, arguments);
  };
  threads.MessageChannel = new Proxy(threads.MessageChannel, {
    construct(target, args, newTarget) {
      const channel = Reflect.construct(target, args, newTarget) as InstanceType<typeof threads.MessageChannel>;
      markPublic(channel.port1);
      markPublic(channel.port2);
      return channel;
    },
  });

  const dispatch = port[HYBRID_DISPATCH] as Dispatch;
  Object.defineProperty(port, HYBRID_DISPATCH, {
    configurable: true,
    writable: true,
    value: function dispatchLinked(this: Record<PropertyKey, unknown>, value: unknown, type: string, event: unknown) {
      if (isOwn(value)) return ownMessages?.(value[1]);
      for (const received of (this[RECEIVING_PORTS] as unknown[] | undefined) ?? []) markPublic(received);
      if (!isEnvelope(value)) return dispatch.call(this, value, type, event);
      return owner.run(directory.labelsOf(value[1]), dispatch, this, [value[2], type, event]);
    },
  });

  const receive = threads.receiveMessageOnPort;
  threads.receiveMessageOnPort = function receiveMessageOnPort(this: unknown) {
    const received = Reflect.apply(receive, this, arguments) as { message: unknown } | undefined;
    if (received === undefined) return received;
    const message = withoutEnvelope(received.message);
    // Ports it transferred: the message itself, or a plain object's top level.
    markPublic(message);
    if (isPlainObject(message)) for (const value of Object.values(message)) markPublic(value);
    if (!isEnvelope(received.message)) {
      owner.enter(ownLabels());
      return received;
    }
    owner.enter(directory.labelsOf(received.message[1]));
    return { message };
  } as typeof receive;
}
