// Child processes for the benchmarks: every one in its own process group (so a kill reaches
// whatever it started), optionally pinned to a core, with its output kept and awaitable lines.
// Every child is registered until it has exited, so the runner can kill the lot on any failure.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { statFields } from '../../dist/src/util/proc-stat.js';

const live = new Set();

/** Whether `taskset` can pin processes here (util-linux; absent on macOS). */
export const canPin = (() => {
  try {
    return spawnSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' }).status === 0;
  } catch {
    return false;
  }
})();

/** Pins this process and its future children (all threads) to `core`; false when impossible. */
export function pinSelf(core) {
  if (!canPin) return false;
  return spawnSync('taskset', ['-a', '-p', '-c', String(core), String(process.pid)], { stdio: 'ignore' }).status === 0;
}

/**
 * Starts `command args` in a new process group, on `core` when given and pinning works.
 * Returns a handle whose `line(re)` resolves with the first stdout line matching `re`.
 */
export function start(command, args, { env = process.env, cwd, core, name = command } = {}) {
  const [file, argv] = core !== undefined && canPin ? ['taskset', ['-c', String(core), command, ...args]] : [command, args];
  const spawnedAt = process.hrtime.bigint();
  const child = spawn(file, argv, { env, cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const handle = {
    name,
    child,
    spawnedAt,
    stdout: '',
    stderr: '',
    exitInfo: undefined,
    waiters: [],
    line: (re, timeoutMs = 30_000) => waitLine(handle, re, timeoutMs),
    exited: undefined,
    kill: (signal = 'SIGKILL') => killGroup(handle, signal),
    stop: (signal = 'SIGKILL', timeoutMs = 10_000) => stop(handle, signal, timeoutMs),
  };
  live.add(handle);
  handle.exited = new Promise((resolve) => {
    child.on('error', (error) => {
      handle.stderr += `spawn error: ${error.message}\n`;
      handle.exitInfo = { code: null, signal: null, error };
      live.delete(handle);
      settle(handle);
      resolve(handle.exitInfo);
    });
    child.on('close', (code, signal) => {
      handle.exitInfo ??= { code, signal };
      live.delete(handle);
      settle(handle);
      resolve(handle.exitInfo);
    });
  });
  let pending = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    // Timestamp first: the startup benchmark measures spawn → first line with it.
    const at = process.hrtime.bigint();
    handle.stdout += chunk;
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const text of lines) {
      for (const waiter of [...handle.waiters]) {
        const match = text.match(waiter.re);
        if (match) {
          handle.waiters.splice(handle.waiters.indexOf(waiter), 1);
          waiter.resolve({ match, at });
        }
      }
      handle.onLine?.(text, at);
    }
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    handle.stderr += chunk;
  });
  return handle;
}

function waitLine(handle, re, timeoutMs) {
  return new Promise((resolve, reject) => {
    const previous = handle.stdout
      .split('\n')
      .slice(0, -1)
      .find((text) => re.test(text));
    if (previous !== undefined) return resolve({ match: previous.match(re), at: process.hrtime.bigint() });
    const waiter = {
      re,
      resolve: (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      reject: (error) => {
        clearTimeout(timer);
        reject(error);
      },
    };
    const timer = setTimeout(() => {
      handle.waiters.splice(handle.waiters.indexOf(waiter), 1);
      reject(new Error(`${handle.name}: no line matching ${re} within ${timeoutMs} ms\nstderr: ${tail(handle.stderr)}`));
    }, timeoutMs);
    if (handle.exitInfo) return waiter.reject(exitedError(handle, re));
    handle.waiters.push(waiter);
  });
}

/** Fails every pending line wait once the process is gone: it will never print them. */
function settle(handle) {
  for (const waiter of handle.waiters.splice(0)) waiter.reject(exitedError(handle, waiter.re));
}

function exitedError(handle, re) {
  return new Error(`${handle.name} exited (${JSON.stringify(handle.exitInfo)}) before printing ${re}\nstderr: ${tail(handle.stderr)}`);
}

const tail = (text) => text.slice(-2000);

function killGroup(handle, signal) {
  if (handle.exitInfo) return;
  try {
    process.kill(-handle.child.pid, signal);
  } catch {
    // Already gone between the check and the kill.
  }
}

/** Sends `signal` to the group and waits for the exit; escalates to SIGKILL after `timeoutMs`. */
async function stop(handle, signal, timeoutMs) {
  killGroup(handle, signal);
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(resolve, timeoutMs, 'late');
  });
  const outcome = await Promise.race([handle.exited, late]);
  clearTimeout(timer);
  if (outcome === 'late') {
    killGroup(handle, 'SIGKILL');
    await handle.exited;
  }
  return handle.exitInfo;
}

/** Runs to completion (bounded by `timeoutMs`) and returns stdout, stderr and the exit. */
export async function run(command, args, options = {}) {
  const handle = start(command, args, options);
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(resolve, options.timeoutMs ?? 120_000, 'late');
  });
  const outcome = await Promise.race([handle.exited, late]);
  clearTimeout(timer);
  if (outcome === 'late') {
    await handle.stop('SIGKILL');
    throw new Error(`${handle.name} did not finish within ${options.timeoutMs ?? 120_000} ms`);
  }
  return { stdout: handle.stdout, stderr: handle.stderr, ...handle.exitInfo };
}

/** A live process's resident set in MB (VmRSS of /proc/<pid>/status); NaN where it cannot be read. */
export const rssMbOf = (pid) => Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m)?.[1] ?? Number.NaN) / 1024;

const TICK_MS = 10;

/**
 * CPU milliseconds (user + system, all threads) of this process's children that have ended and
 * been waited for, so far: the difference around one child's whole life is its CPU time (Linux:
 * cutime and cstime of /proc/self/stat, in clock ticks of 10 ms). Only while no other child ends.
 */
export function childrenCpuMs() {
  // statFields' index 13 and 14: fields 16 and 17 of proc(5).
  const fields = statFields(readFileSync('/proc/self/stat', 'utf8'));
  return (Number(fields[13]) + Number(fields[14])) * TICK_MS;
}

/** Kills every process group still running and waits for them (bounded). */
export async function killAll() {
  const handles = [...live];
  await Promise.all(handles.map((handle) => handle.stop('SIGKILL', 5_000)));
}

/** Synchronous last resort for `exit` handlers, where nothing can be awaited. */
export function killAllNow() {
  for (const handle of live) killGroup(handle, 'SIGKILL');
}
