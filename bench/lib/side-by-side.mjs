// Two contenders at once on the app core, each under its own wrk: the cost of one against the
// other as CPU time per request, measured over the same seconds.
//
// Why, next to interleaved rounds: on this kind of machine the CPU itself changes speed from one
// run to the next (a neighbour's load, steal), by more than the few percent the throughput goals
// are about — the same contender run twice, seconds apart, has differed by 13% in CPU per request.
// Runs made at the same time see the same machine, so that drift cancels in their ratio: paired
// rounds measured this way spread over ±1–3% where back-to-back runs spread over ±10%. A/A runs
// (one contender on both sides, 4–6 rounds) read 0.993, 1.001 and 1.029: under ~3% is no difference.
//
// Each process's CPU time counts all its threads (V8's profiler thread, libuv's), so nothing a
// contender does off its main thread is hidden from the ratio. The two apps interfere with each
// other (caches, context switches) the same way in both directions; the launch order alternates
// between rounds.
import { readdirSync, readFileSync } from 'node:fs';
import { launchApp } from './app.mjs';
import { ratio } from './stats.mjs';
import { wrk } from './wrk.mjs';

/** A thread's nanoseconds on a CPU and runnable but waiting for one (Linux schedstat); throws once it is gone. */
export function threadSchedstat(pid, tid) {
  const [runNs, waitNs] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
  return { runNs, waitNs };
}

/**
 * The threads of `pid` as they are now: each one's name (Linux's `comm`), whether it is the main
 * thread, and its schedstat; a thread that ends while being read is left out. Throws once `pid` is gone.
 */
export function threadStats(pid) {
  const threads = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      threads.push({ name, main: tid === String(pid), ...threadSchedstat(pid, tid) });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return threads;
}

const threadCpuNs = (pid, tid) => threadSchedstat(pid, tid).runNs;

/** Nanoseconds on CPU of every thread of `pid` (Linux schedstat); NaN where there is none. */
export function processCpuNs(pid) {
  try {
    let sum = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) sum += threadCpuNs(pid, tid);
    return sum;
  } catch {
    return Number.NaN;
  }
}

/** Nanoseconds on CPU of the main thread of `pid` alone (its JavaScript); NaN where there is none. */
export function mainThreadCpuNs(pid) {
  try {
    return threadCpuNs(pid, pid);
  } catch {
    return Number.NaN;
  }
}

/**
 * Seconds of load before a round is measured. V8 compiles an app's hot code with its optimizing
 * tier only seconds into the load, later under an agent (`--trace-opt` shows when), and a round
 * begun earlier measures both apps' code in a lower tier for part of it; from here on the ratio is
 * the steady state's. Those first seconds are a one-time cost, given apart (docs/performance.md,
 * "Method").
 */
export const STEADY_WARMUP_SECONDS = 15;

/**
 * One round: `a` and `b` launched on the app core, warmed for `warmupSeconds` and measured at the
 * same time, loaded on `path` (the throughput apps' `/json` unless said), `extraEnv` given to
 * both. Returns per contender req/s and CPU µs per request, and the ratios a/b of requests per CPU
 * second and of req/s (above 1: `a` is the cheaper).
 */
export async function sideBySide(
  bin,
  [a, b],
  appFile,
  sinkUrl,
  { seconds, warmupSeconds = STEADY_WARMUP_SECONDS, connections, round, path = '/json', extraEnv = {} },
) {
  const order = round % 2 === 0 ? [a, b] : [b, a];
  const apps = [];
  try {
    for (const contender of order) apps.push({ contender, ...(await launchApp(contender, appFile, { sinkUrl, extraEnv })) });
    const load = (s) => Promise.all(apps.map((app) => wrk(bin, `${app.url}${path}`, { connections, seconds: s })));
    await load(warmupSeconds);
    const before = apps.map((app) => processCpuNs(app.handle.child.pid));
    const runs = await load(seconds);
    const after = apps.map((app) => processCpuNs(app.handle.child.pid));
    const of = (contender) => {
      const i = apps.findIndex((app) => app.contender === contender);
      const requests = runs[i].rps * seconds;
      return { rps: runs[i].rps, failed: runs[i].non2xx + runs[i].socketErrors, cpuMicrosPerRequest: (after[i] - before[i]) / 1000 / requests };
    };
    const [ra, rb] = [of(a), of(b)];
    return { a: ra, b: rb, perCpu: ratio(rb.cpuMicrosPerRequest, ra.cpuMicrosPerRequest), rps: ratio(ra.rps, rb.rps) };
  } finally {
    // SIGKILL: OTel's register ignores SIGTERM, and shutdown cost is not what is measured.
    await Promise.all(apps.map((app) => app.handle.stop('SIGKILL')));
  }
}
