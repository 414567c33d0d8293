import { nodeOs } from '../util/builtins.js';
import type { Logger } from '../log.js';

/** What the exit paths drive: the same final flush, asynchronously where the loop still turns, synchronously where it does not. */
export interface Finisher {
  finishAsync(deadlineAt: number): Promise<void>;
  finishSync(deadlineAt: number): void;
}

/** Signals whose default action is to end the process and after which users expect a flush. */
const FLUSH_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
/**
 * A terminal's Ctrl-C reaches both the pyro-run CLI and the app (same process group), and the CLI
 * relays it too: a repeat this soon is the same keypress, not a second one.
 */
const DUPLICATE_SIGNAL_MS = 500;
/** How long past the deadline the loop is held, so the flush's own deadline handling runs first. */
const HOLD_MARGIN_MS = 250;

/**
 * One shutdown path for every way a process ends, bounded by one deadline:
 * - event loop ran dry (`beforeExit`): flush asynchronously, holding the loop open until done;
 * - `process.exit()`, uncaught exception, or any exit we did not see coming (`exit`): whatever is
 *   still pending is flushed synchronously (a worker does the I/O) within what is left of the
 *   deadline;
 * - SIGTERM/SIGINT/SIGHUP with no handler of the app's: flush, then die of the same signal, so the
 *   parent sees exactly what it would have seen without us. A second signal during the flush ends
 *   the process at once. If the app has its own handler, the app decides; we flush when it exits —
 *   or, when its handler cleans up, removes itself and raises the signal at its own process to die
 *   of it (as NestJS's shutdown hooks do), we flush and it dies of it. That raise is taken where
 *   the app makes it (process.kill is wrapped): delivered, the signal would meet only our listener,
 *   which keeps the default action away, and with nothing else left to do the event loop ends before
 *   the signal is dispatched — the process would exit 0.
 */
/** The flush signal `signal` names (a name or a number, as process.kill takes it); SIGTERM when omitted, as there. */
function signalName(signal: string | number | undefined): NodeJS.Signals | undefined {
  const name =
    signal === undefined ? 'SIGTERM' : typeof signal === 'number' ? Object.entries(nodeOs().constants.signals).find(([, n]) => n === signal)?.[0] : signal;
  return (FLUSH_SIGNALS as readonly string[]).includes(name ?? '') ? (name as NodeJS.Signals) : undefined;
}

export function installShutdown(finisher: Finisher, timeoutMs: number, log: Logger): () => void {
  let deadlineAt: number | undefined;
  let asyncDone: Promise<void> | undefined;
  const deadline = () => (deadlineAt ??= Date.now() + timeoutMs);

  const finishAsync = (): Promise<void> => {
    asyncDone ??= finisher.finishAsync(deadline()).catch((error: unknown) => log.debug(`final flush failed: ${String(error)}`));
    return asyncDone;
  };

  const onBeforeExit = () => {
    if (asyncDone) return;
    // Our uploads do not hold the loop open (their sockets are unref'd), so this timer does,
    // until the flush is done (it gives up at the deadline); should the loop end anyway, the
    // 'exit' path takes over whatever is still pending.
    const hold = setTimeout(() => undefined, Math.max(0, deadline() - Date.now()) + HOLD_MARGIN_MS);
    void finishAsync().finally(() => clearTimeout(hold));
  };

  const onExit = () => {
    try {
      finisher.finishSync(deadline());
    } catch (error) {
      log.debug(`final flush failed: ${String(error)}`);
    }
  };

  const firstSeen = new Map<NodeJS.Signals, number>();
  const kill = process.kill;
  const watchedKill = function (this: unknown, pid: number, signal?: string | number): true {
    const name = pid === process.pid ? signalName(signal) : undefined;
    const listeners = name === undefined ? [] : process.listeners(name);
    if (name === undefined || listeners.length !== 1 || listeners[0] !== onSignal)
      return kill.apply(process, arguments as unknown as Parameters<typeof process.kill>);
    void finishAsync().finally(() => die(name));
    return true;
  };

  const onSignal = (signal: NodeJS.Signals) => {
    const now = performance.now();
    const seen = firstSeen.get(signal);
    if (seen !== undefined) {
      if (now - seen < DUPLICATE_SIGNAL_MS) return;
      die(signal);
      return;
    }
    firstSeen.set(signal, now);
    // The app listens too: its handler owns what happens next; `exit` will flush.
    if (process.listenerCount(signal) > 1) return;
    void finishAsync().finally(() => die(signal));
  };

  const die = (signal: NodeJS.Signals) => {
    uninstall();
    process.kill(process.pid, signal);
  };

  const uninstall = () => {
    process.off('beforeExit', onBeforeExit);
    process.off('exit', onExit);
    for (const signal of FLUSH_SIGNALS) process.off(signal, onSignal);
    if (process.kill === watchedKill) process.kill = kill;
  };

  process.on('beforeExit', onBeforeExit);
  process.kill = watchedKill;
  // First in line: @datadog/pprof stops (and discards) a running profile in its own 'exit'
  // listener, and the app's listeners may end the process harder; the last window is ours.
  process.prependListener('exit', onExit);
  for (const signal of FLUSH_SIGNALS) process.on(signal, onSignal);
  return uninstall;
}
