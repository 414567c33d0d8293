/**
 * The fault suite's view of an app under pyro-run: start it, load it steadily while measuring
 * what its users would see (every response checked, latency per request), read its memory from
 * /proc, and read pyro-run's warnings off its stderr.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { type Child, fixture, registerPath, repoRoot, runNode } from '../../support/child.js';
import type { DecodedSpan, IngestRecord, Receiver } from '../../support/receiver.js';

export { repoRoot };

/** Settings every fault run shares: short windows and timeouts so outages and recoveries fit in seconds. */
export const FAST = {
  PYROSCOPE_FLUSH_INTERVAL_MS: '1000',
  // Short, but not so short that a healthy receiver in a busy test process trips it.
  PYRO_RUN_UPLOAD_TIMEOUT_MS: '2500',
  PYRO_RUN_SHUTDOWN_TIMEOUT_MS: '3000',
  // One span batch per 2 s (or per 2048 spans): with two profiles a second, a 10 s outage queues
  // ~25 requests, inside the sender's bound of 32, so nothing may be dropped.
  OTEL_BSP_SCHEDULE_DELAY: '2000',
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2048',
  OTEL_BSP_MAX_QUEUE_SIZE: '8192',
} as const;

export interface AppOptions {
  env?: Record<string, string | undefined>;
  /** Node flags before `--import register` (e.g. `--require` a fault preload). */
  nodeArgs?: string[];
  app?: string;
  /** Start without our preload: the app as it runs without pyro-run. */
  bare?: boolean;
}

export interface RunningApp {
  child: Child;
  base: string;
  pid: number;
  startedAt: number;
  listeningAt: number;
}

export async function startApp(options: AppOptions = {}): Promise<RunningApp> {
  const startedAt = Date.now();
  const preload = options.bare ? [] : ['--import', registerPath];
  const child = runNode([...(options.nodeArgs ?? []), ...preload, fixture(options.app ?? 'apps/server.cjs')], {
    env: { OTEL_SERVICE_NAME: 'fault-app', ...FAST, ...options.env },
  });
  const port = (await child.line(/listening (\d+)/, 30_000))[1];
  return { child, base: `http://127.0.0.1:${port}`, pid: child.process.pid!, startedAt, listeningAt: Date.now() };
}

export interface LoadResult {
  requests: number;
  /** Requests per second over the phase. */
  throughput: number;
  p50: number;
  p99: number;
  max: number;
  /** Every seq sent (each answered correctly: the load throws otherwise). */
  seqs: number[];
  ms: number;
  /** Every latency, ms, in completion order. */
  latencies: number[];
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

let nextSeq = 1;

/**
 * A closed loop of `concurrency` clients on keep-alive connections, for `durationMs`: GET
 * /work/<seq>?ms=<workMs>, each answer must be 200 with `{"seq":<seq>}` (a wrong or failed answer
 * throws). Bounded in time: the phase ends at `durationMs`, one request may not take over 10 s.
 */
export async function steadyLoad(base: string, options: { durationMs: number; concurrency?: number; workMs?: number }): Promise<LoadResult> {
  const concurrency = options.concurrency ?? 4;
  const workMs = options.workMs ?? 1;
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies: number[] = [];
  const seqs: number[] = [];
  const started = performance.now();
  const stopAt = started + options.durationMs;
  const one = (seq: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const t0 = performance.now();
      const req = request(`${base}/work/${seq}?ms=${workMs}`, { agent, timeout: 10_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          latencies.push(performance.now() - t0);
          const body = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200 || body !== JSON.stringify({ seq })) reject(new Error(`/work/${seq} answered ${res.statusCode}: ${body.slice(0, 200)}`));
          else resolve();
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`/work/${seq} took over 10 s`)));
      req.on('error', reject);
      req.end();
    });
  const worker = async () => {
    while (performance.now() < stopAt) {
      const seq = nextSeq++;
      seqs.push(seq);
      await one(seq);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    agent.destroy();
  }
  const ms = performance.now() - started;
  return summarise(latencies, seqs, ms);
}

function summarise(latencies: number[], seqs: number[], ms: number): LoadResult {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    requests: latencies.length,
    throughput: (latencies.length / ms) * 1000,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
    seqs,
    ms,
    latencies,
  };
}

/** Several load phases as one: requests and time added up, percentiles over every request. */
export function mergeLoads(parts: readonly LoadResult[]): LoadResult {
  return summarise(
    parts.flatMap((p) => p.latencies),
    parts.flatMap((p) => p.seqs),
    parts.reduce((sum, p) => sum + p.ms, 0),
  );
}

/** Resident set size of a process, in bytes (Linux /proc). */
export function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = status.match(/^VmRSS:\s+(\d+)\s+kB$/m)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb) * 1024;
}

/** pyro-run's warning lines. */
export function warnings(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line.startsWith('pyro-run: warning:'));
}

/** pyro-run's upload-failure warnings for one pipeline (`profiles` or `spans`). */
export function uploadWarnings(stderr: string, kind: 'profiles' | 'spans'): string[] {
  return warnings(stderr).filter((line) => line.startsWith(`pyro-run: warning: ${kind} upload`));
}

/** The HTTP server spans of /work/<seq> requests, by seq. */
export function workSpans(spans: readonly DecodedSpan[]): Map<number, DecodedSpan> {
  const out = new Map<number, DecodedSpan>();
  for (const span of spans) {
    const path = span.attributes['url.path'] ?? span.attributes['http.target'];
    const match = typeof path === 'string' ? path.match(/^\/work\/(\d+)/) : null;
    if (match && span.name === 'GET /work/:seq') out.set(Number(match[1]), span);
  }
  return out;
}

export interface Chain {
  /** from of the first window of the longest gap-free run that starts at the earliest window. */
  from: number;
  until: number;
  windows: number;
  /** A window missing between two delivered ones: [until of the one before, from of the one after]. */
  gap: [number, number] | undefined;
  duplicates: number;
}

/**
 * Profile windows are cut back to back (each one's `from` is the previous one's `until`), so the
 * delivered windows of one type must form a chain with no gap: a gap is a lost window.
 */
export function windowChain(ingests: readonly IngestRecord[], metric = 'wall'): Chain {
  const windows = ingests.filter((i) => i.metricName === metric).sort((a, b) => a.from - b.from);
  let duplicates = 0;
  const unique: IngestRecord[] = [];
  for (const w of windows) {
    if (unique.length > 0 && unique.at(-1)!.from === w.from) duplicates++;
    else unique.push(w);
  }
  if (unique.length === 0) return { from: Number.NaN, until: Number.NaN, windows: 0, gap: undefined, duplicates };
  let until = unique[0]!.until;
  let gap: [number, number] | undefined;
  let count = 1;
  for (const w of unique.slice(1)) {
    if (w.from !== until) {
      gap = [until, w.from];
      break;
    }
    until = w.until;
    count++;
  }
  return { from: unique[0]!.from, until, windows: count, gap, duplicates };
}

/** Waits for the process to end after `signal`, bounded. */
export async function stop(
  app: RunningApp,
  signal: NodeJS.Signals = 'SIGTERM',
  boundMs = 15_000,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
  app.child.process.kill(signal);
  return app.child.exit(boundMs);
}

/** Every secret-looking value that must never reach the app's output. */
export function assertNoSecrets(output: string, secrets: readonly string[]): void {
  for (const secret of secrets) {
    if (output.includes(secret)) throw new Error(`a secret leaked into the output:\n${output}`);
  }
}

export type { Receiver };

/** Resolves when the child's stderr (so far or from now on) matches `pattern`; rejects on exit or after `timeoutMs`. */
export function stderrMatch(child: Child, pattern: RegExp, timeoutMs = 20_000): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const stream = child.process.stderr!;
    const check = () => {
      const match = child.stderr.match(pattern);
      if (!match) return false;
      done();
      resolve(match);
      return true;
    };
    // Child appends to .stderr in its own 'data' listener, registered first: by the time ours runs, the text is there.
    const onData = () => void check();
    const onExit = () => {
      if (check()) return;
      done();
      reject(new Error(`process ended before stderr matched ${pattern}\nstderr: ${child.stderr}`));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`stderr did not match ${pattern} within ${timeoutMs} ms\nstderr: ${child.stderr}`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      stream.off('data', onData);
      child.process.off('close', onExit);
    };
    stream.on('data', onData);
    child.process.on('close', onExit);
    check();
  });
}

/** POST to the app (e.g. /exit/3), the response read and dropped. */
export async function post(base: string, path: string): Promise<void> {
  const response = await fetch(`${base}${path}`, { method: 'POST' });
  await response.arrayBuffer();
}
