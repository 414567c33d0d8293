// How busy the machine is right now, from /proc/stat over one second: other work on the cores
// skews every number the benchmarks take, and the runner says so instead of reporting it silently.
// The load average would also count the previous benchmark run, so it is used only off Linux.
import { readFileSync } from 'node:fs';
import os from 'node:os';

function cpuTimes() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3] + (fields[4] ?? 0);
  return { idle, total: fields.reduce((a, b) => a + b, 0) };
}

/** Share of all cores busy over the next second (0–1), or the load average per core elsewhere. */
export async function busyShare() {
  try {
    const before = cpuTimes();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = cpuTimes();
    const total = after.total - before.total;
    return total > 0 ? 1 - (after.idle - before.idle) / total : 0;
  } catch {
    return os.loadavg()[0] / os.cpus().length;
  }
}
