// How much of the app's core went to other processes during a measurement: the core's busy time
// (/proc/stat) minus the app's own CPU time (/proc/<pid>/stat). On a shared machine this is the
// noise that interleaving cannot remove, so every throughput run records it. Linux only; elsewhere
// it reads as unknown.
import { readFileSync } from 'node:fs';

/**
 * user + nice + system + steal of one core, and its total. Interrupt and softirq time are left out:
 * the loopback network work of the app's own requests lands there, outside its process times.
 * Steal (another virtual machine on the same host) is interference and stays in.
 */
function coreTicks(core) {
  const line = readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`cpu${core} `));
  const [user, nice, system, idle, iowait = 0, irq = 0, softirq = 0, steal = 0] = line.trim().split(/\s+/).slice(1).map(Number);
  return { busy: user + nice + system + steal, total: user + nice + system + idle + iowait + irq + softirq + steal };
}

function processTicks(pid) {
  // The command name may hold spaces: fields are counted after its closing parenthesis.
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Starts watching `core` and the process `pid`; `end()` returns the share of the core others used. */
export function watchCore(core, pid) {
  let start;
  try {
    start = { ...coreTicks(core), app: processTicks(pid) };
  } catch {
    return { end: () => Number.NaN };
  }
  return {
    end() {
      try {
        const now = coreTicks(core);
        const total = now.total - start.total;
        const others = now.busy - start.busy - (processTicks(pid) - start.app);
        return total > 0 ? Math.max(0, others / total) : Number.NaN;
      } catch {
        return Number.NaN;
      }
    },
  };
}
