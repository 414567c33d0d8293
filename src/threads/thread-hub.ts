import type { ShippedLabels } from '../profiling/fold-shipment.js';
import type { SampleLabels } from '../profiling/profile-window.js';
import type { AllocationProfileNode } from '@datadog/pprof/out/src/v8-types.js';
import type { FoldShipment } from '../profiling/fold-shipment.js';
import type { OtherThread } from '../profiling/profile-window.js';
import { COLLECT, COLLECTED, HUB_CHANNEL, isOwn, type ToMain } from './protocol.js';

/** How long the final flush waits for the workers to ship what they sampled last: a worker busy in a long synchronous task cannot answer, and its last second is lost. */
const COLLECT_WAIT_MS = 300;
/** Distinct lines from workers' logs kept to say each once; past it, lines are said again. */
const MAX_LINES = 256;

export interface HubParts {
  /** Where the workers' samples go: the main thread's time source, window by window. */
  addShipment(thread: OtherThread, shipment: FoldShipment, spanOfLabels: (labels: ShippedLabels) => SampleLabels | undefined): void;
  /** The main thread's labels of the spans the workers' samples name. */
  labelsOf(labels: ShippedLabels): SampleLabels | undefined;
  /** A worker's latest heap, for the heap profile's windows; undefined once it ended. */
  setHeap(thread: OtherThread, tree: AllocationProfileNode | undefined): void;
  /** The shared COLLECTED counter's array (protocol.ts). */
  flags: Int32Array;
  /** Writes a line to pyro-run's log (stderr). */
  write(line: string): void;
}

/**
 * The main thread's end of the workers' channel (protocol.ts): every worker's samples go into the
 * window being recorded, its log lines are said once for the process, and at the end every live
 * worker is asked for what it sampled last, within the deadline and at most COLLECT_WAIT_MS. The
 * channel has no listener: its messages are handed to `take` where the thread's ports dispatch
 * them (message-links.ts); it is open so that the workers' messages reach this thread.
 */
export class ThreadHub {
  private readonly channel: import('node:worker_threads').BroadcastChannel;
  /** The workers that said hello and neither goodbye nor were terminated. */
  private readonly live = new Set<number>();
  private readonly said = new Set<string>();

  constructor(private readonly parts: HubParts) {
    const { BroadcastChannel } = process.getBuiltinModule('node:worker_threads') as typeof import('node:worker_threads');
    this.channel = new BroadcastChannel(HUB_CHANNEL);
    this.channel.unref();
  }

  /** How many workers run an agent now. */
  get workers(): number {
    return this.live.size;
  }

  /** A worker the app terminated: it says no goodbye of its own. */
  forget(thread: number): void {
    this.live.delete(thread);
    this.parts.setHeap({ key: thread, name: '' }, undefined);
  }

  take(message: ToMain): void {
    switch (message.type) {
      case 'hello':
        this.live.add(message.thread);
        break;
      case 'samples':
        this.parts.addShipment({ key: message.thread, name: message.name }, message.shipment, (labels) => this.parts.labelsOf(labels));
        break;
      case 'heap':
        this.parts.setHeap({ key: message.thread, name: message.name }, message.tree);
        break;
      case 'log':
        if (this.said.has(message.line)) break;
        if (this.said.size < MAX_LINES) this.said.add(message.line);
        this.parts.write(message.line);
        break;
      case 'bye':
        this.forget(message.thread);
        break;
    }
  }

  /** At exit, where the loop no longer turns: asks, waits on the counter, then reads what came. */
  collectSync(deadlineAt: number): void {
    if (this.live.size > 0) {
      const asked = this.ask(deadlineAt);
      for (let wait = this.nextWait(asked); wait !== undefined; wait = this.nextWait(asked)) Atomics.wait(this.parts.flags, COLLECTED, wait.answered, wait.ms);
    }
    // What workers that ended sent last may not have been delivered yet.
    this.drain();
  }

  /** The same where the loop still turns. */
  async collectAsync(deadlineAt: number): Promise<void> {
    if (this.live.size > 0) {
      const asked = this.ask(deadlineAt);
      for (let wait = this.nextWait(asked); wait !== undefined; wait = this.nextWait(asked)) {
        const waited = Atomics.waitAsync(this.parts.flags, COLLECTED, wait.answered, wait.ms);
        if (waited.async) await waited.value;
      }
    }
    this.drain();
  }

  close(): void {
    this.channel.close();
  }

  /** Asks every worker to ship: the counter of those that did as it was before, and until when to wait for them. */
  private ask(deadlineAt: number): { before: number; until: number } {
    const { flags } = this.parts;
    const before = Atomics.load(flags, COLLECTED);
    Atomics.add(flags, COLLECT, 1);
    Atomics.notify(flags, COLLECT);
    return { before, until: Math.min(deadlineAt, Date.now() + COLLECT_WAIT_MS) };
  }

  /** The counter's value to wait on and for how long (ms); undefined once every live worker answered, or time is up. */
  private nextWait({ before, until }: { before: number; until: number }): { answered: number; ms: number } | undefined {
    const answered = Atomics.load(this.parts.flags, COLLECTED);
    const ms = until - Date.now();
    return answered - before >= this.live.size || ms <= 0 ? undefined : { answered, ms };
  }

  /** What the workers sent and the loop has not delivered yet. */
  private drain(): void {
    // It takes a BroadcastChannel as well (Node's docs; its types say MessagePort only).
    const receive = (process.getBuiltinModule('node:worker_threads') as typeof import('node:worker_threads')).receiveMessageOnPort as (
      port: unknown,
    ) => { message: unknown } | undefined;
    for (let received = receive(this.channel); received !== undefined; received = receive(this.channel)) {
      if (isOwn(received.message)) this.take(received.message[1]);
    }
  }
}
