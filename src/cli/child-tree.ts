/**
 * The processes that a launcher (npm, npx, `sh -c`, tsx's CLI) started below pyro-run's child,
 * the app among them. The launcher may end before the app: npm exits as soon as `sh -c` dies of
 * the relayed SIGTERM, while the app is still flushing its last profile window and spans. If
 * pyro-run ended then, a supervisor would take the app for gone, and as PID 1 of a container
 * pyro-run's exit would make the kernel kill the app mid-flush. So pyro-run waits for them.
 *
 * Once the launcher has exited they are no longer found below it (the kernel hands orphans to
 * init, or to PID 1 of the namespace), so they are remembered each time a signal is relayed:
 * that is when a shutdown begins, and /proc is read only then and while waiting.
 */
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { relaysToItsChild } from '../util/launchers.js';
import { isRunning, processesBelow, scriptOf, type ProcessEntry } from './process-tree.js';

/** Between two reads of a few /proc/<pid>/stat files while waiting: short next to a flush, cheap. */
const POLL_MS = 50;

export class ChildTree {
  /** Every process seen below the child, keyed by pid and start time. */
  private readonly seen = new Map<string, ProcessEntry>();

  /** `graceMs`: how long pyro-run may wait for them once the child has exited. */
  constructor(
    private readonly child: ChildProcess,
    private readonly graceMs: number,
  ) {}

  /**
   * Where `signal` goes besides the child: the processes below it (looked up now, while it runs)
   * and those remembered from earlier signals, as far as they still run. Children of a running
   * launcher that passes `signal` on itself are left out (tsx: see relaysToItsChild); their own
   * descendants are not.
   */
  signalTargets(signal: NodeJS.Signals): number[] {
    const childPid = this.child.exitCode === null && this.child.signalCode === null ? this.child.pid : undefined;
    if (childPid !== undefined) this.remember(childPid);
    const processes = this.running();
    const runningPids = new Set(processes.map((entry) => entry.pid));
    if (childPid !== undefined) runningPids.add(childPid);
    const relayedByParent = (entry: ProcessEntry) => runningPids.has(entry.parent) && relaysToItsChild(scriptOf(entry.parent), signal);
    return processes.filter((entry) => !relayedByParent(entry)).map((entry) => entry.pid);
  }

  /** Resolves once none of the remembered processes runs, or after `graceMs`, whichever comes first. */
  async waitUntilGone(): Promise<void> {
    const deadline = performance.now() + this.graceMs;
    for (let left = this.graceMs; left > 0 && this.running().length > 0; left = deadline - performance.now()) {
      await sleep(Math.min(POLL_MS, left));
    }
  }

  private remember(childPid: number): void {
    for (const entry of processesBelow(childPid)) this.seen.set(`${entry.pid}:${entry.startTime}`, entry);
  }

  private running(): ProcessEntry[] {
    return [...this.seen.values()].filter(isRunning);
  }
}
