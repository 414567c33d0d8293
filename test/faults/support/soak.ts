/**
 * The soak: an app under pyro-run serving a steady load for a long time while its backend flaps
 * (healthy / 500s / hangs), its health sampled throughout — RSS, live heap (after a full GC),
 * memory outside the heap, open file descriptors, live handles, event-loop delay — and a verdict
 * on the trend after warm-up (least-squares slope). One engine for the CI test
 * (test/faults/soak-short.test.ts) and the long run (test/faults/soak.mjs).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fixture } from '../../support/child.js';
import type { Behaviour, Receiver } from '../../support/receiver.js';
import { startReceiver } from '../../support/receiver.js';
import { type RunningApp, startApp, steadyLoad, stop, warnings } from './app.js';

export type PhaseName = 'healthy' | '500' | 'hang' | 'settle';

export interface SoakOptions {
  durationMs: number;
  /** One row of the table per this long (also how often the live heap is measured). */
  rowMs: number;
  /** Backend behaviour, cycled; each entry lasts its ms (multiples of rowMs). */
  phases: [PhaseName, number][];
  /** Rows before this are warm-up: excluded from the trend. */
  warmupMs: number;
  /**
   * After the phases, the backend stays healthy, under the same load, until the backlog has gone
   * (see settled), for at most this long. Retries back off up to 30 s, so ≥ 40 s.
   */
  settleMs: number;
  concurrency?: number;
  onRow?: (row: SoakRow) => void;
}

export interface SoakRow {
  /** Seconds since the load began, at the end of the row. */
  t: number;
  phase: PhaseName;
  reqPerSec: number;
  p99Ms: number;
  rssMb: number;
  /** Live heap: heapUsed right after a full GC. */
  liveHeapMb: number;
  /** external + arrayBuffers after that GC: where queued request bodies live. */
  outsideHeapMb: number;
  fds: number;
  handles: number;
  /** Event-loop delay over the row: worst per-second p99, and the max. */
  loopP99Ms: number;
  loopMaxMs: number;
  /** Profile uploads and span batches the backend stored during the row. */
  stored: number;
}

export interface Trend {
  /** Least-squares slope per minute, after warm-up. */
  perMinute: number;
  first: number;
  last: number;
  min: number;
  max: number;
}

export interface SoakResult {
  rows: SoakRow[];
  trends: Record<'rssMb' | 'liveHeapMb' | 'outsideHeapMb' | 'fds' | 'handles', Trend>;
  /** Memory outside the heap from the settled state before the first outage to the one at the end. */
  outsideHeapGrowth: Growth;
  requests: number;
  /** Healthy phases (after the first) in which nothing was stored: uploads did not resume. */
  healthyPhasesWithoutDelivery: number;
  healthyPhases: number;
  shutdown: { ms: number; code: number | null; signal: NodeJS.Signals | null };
  warnings: string[];
  loopP99MedianMs: number;
  loopMaxMs: number;
}

const MB = 1024 * 1024;

interface ProbeLine {
  t: number;
  rss: number;
  fds: number;
  handles: number;
  loopP99Ms: number;
  loopMaxMs: number;
}

/** Least-squares slope of y over x. */
export function slope(xs: readonly number[], ys: readonly number[]): number {
  const n = xs.length;
  if (n < 2) return 0;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

function trend(rows: readonly SoakRow[], pick: (r: SoakRow) => number): Trend {
  const ys = rows.map(pick);
  return {
    perMinute: slope(
      rows.map((r) => r.t / 60),
      ys,
    ),
    first: ys[0] ?? Number.NaN,
    last: ys.at(-1) ?? Number.NaN,
    min: Math.min(...ys),
    max: Math.max(...ys),
  };
}

export interface Growth {
  perMinute: number;
  /** The settled readings compared, MB, and when (s). */
  from: { t: number; mb: number };
  to: { t: number; mb: number };
}

/**
 * Memory outside the heap is a sawtooth: request bodies queue while the backend is down and leave
 * when it recovers (the queue's cap is tested on its own, test/faults/memory.test.ts), and retries
 * back off up to 30 s, so a healthy phase of a few rows may end before its backlog went. Its slope
 * over all rows depends on where the run ends in the cycle (−2 to +4 MB/min between runs of the
 * same code), so a leak is judged between two settled states instead: the lowest reading before
 * the first outage (its first row, start-up, left out) and the lowest of the settle rows at the
 * end. A leak raises the second.
 */
export function outsideHeapGrowth(rows: readonly SoakRow[]): Growth {
  const firstOutage = rows.findIndex((r) => r.phase !== 'healthy');
  const before = rows.slice(1, firstOutage < 0 ? rows.length : firstOutage);
  const settled = rows.filter((r) => r.phase === 'settle');
  const lowest = (of: readonly SoakRow[]) => of.reduce((low, r) => (r.outsideHeapMb < low.outsideHeapMb ? r : low));
  if (before.length === 0 || settled.length === 0) throw new Error('outsideHeapGrowth needs healthy rows before the first outage and settle rows');
  const from = lowest(before);
  const to = lowest(settled);
  return {
    perMinute: (to.outsideHeapMb - from.outsideHeapMb) / ((to.t - from.t) / 60),
    from: { t: from.t, mb: from.outsideHeapMb },
    to: { t: to.t, mb: to.outsideHeapMb },
  };
}

/**
 * Whether the settle can stop: the backend has taken requests in each of the last two rows (the
 * retries fired) and the last one no longer lowered memory outside the heap (the backlog is gone).
 */
export function settled(rows: readonly SoakRow[]): boolean {
  const [previous, last] = rows.slice(-2);
  if (previous === undefined || last === undefined) return false;
  return previous.stored > 0 && last.stored > 0 && last.outsideHeapMb >= previous.outsideHeapMb - 0.5;
}

const BEHAVIOUR: Record<PhaseName, Behaviour | undefined> = { healthy: undefined, '500': { status: 500 }, hang: { hang: true }, settle: undefined };

function phaseAt(options: SoakOptions, elapsedMs: number): PhaseName {
  const cycle = options.phases.reduce((sum, [, ms]) => sum + ms, 0);
  let at = elapsedMs % cycle;
  for (const [name, ms] of options.phases) {
    if (at < ms) return name;
    at -= ms;
  }
  return options.phases[0]![0];
}

function readProbe(file: string): ProbeLine[] {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as ProbeLine);
  } catch {
    return [];
  }
}

export async function soak(options: SoakOptions): Promise<SoakResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'pyro-run-soak-'));
  const probeFile = path.join(dir, 'probe.jsonl');
  let receiver: Receiver | undefined;
  let app: RunningApp | undefined;
  try {
    receiver = await startReceiver();
    app = await startApp({
      app: 'faults/steady-server.cjs',
      // --expose-gc for /memory?gc=1; a fixed young generation, so RSS is not moved by V8 sizing
      // it to the allocation rate over the first minute (see test/faults/memory.test.ts).
      nodeArgs: ['--expose-gc', '--min-semi-space-size=8', '--max-semi-space-size=8', '--require', fixture('faults/probe.cjs')],
      env: {
        PYROSCOPE_SERVER_ADDRESS: receiver.url,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        PYRO_RUN_PROBE_FILE: probeFile,
        OTEL_BSP_SCHEDULE_DELAY: '1000',
      },
    });
    const rows: SoakRow[] = [];
    let requests = 0;
    const began = Date.now();
    let phase: PhaseName | undefined;
    const phaseLog: { name: PhaseName; from: number; until: number }[] = [];
    const enter = (name: PhaseName, at: number) => {
      receiver!.setBehaviour('ingest', BEHAVIOUR[name]);
      receiver!.setBehaviour('traces', BEHAVIOUR[name]);
      phaseLog.at(-1) && (phaseLog.at(-1)!.until = at);
      phaseLog.push({ name, from: at, until: Number.POSITIVE_INFINITY });
    };
    const measureRow = async (name: PhaseName): Promise<SoakRow> => {
      const rowStart = Date.now();
      const load = await steadyLoad(app!.base, { durationMs: options.rowMs, concurrency: options.concurrency ?? 2 });
      requests += load.requests;
      const live = (await (await fetch(`${app!.base}/memory?gc=1`)).json()) as { heapUsed: number; external: number; arrayBuffers: number };
      const rowEnd = Date.now();
      const probes = readProbe(probeFile).filter((p) => p.t > rowStart && p.t <= rowEnd);
      const last = probes.at(-1);
      const row: SoakRow = {
        t: Math.round((rowEnd - began) / 1000),
        phase: name,
        reqPerSec: Math.round(load.throughput),
        p99Ms: Math.round(load.p99 * 10) / 10,
        rssMb: Math.round(((last?.rss ?? Number.NaN) / MB) * 10) / 10,
        liveHeapMb: Math.round((live.heapUsed / MB) * 100) / 100,
        outsideHeapMb: Math.round(((live.external + live.arrayBuffers) / MB) * 100) / 100,
        fds: last?.fds ?? Number.NaN,
        handles: last?.handles ?? Number.NaN,
        loopP99Ms: Math.round(Math.max(0, ...probes.map((p) => p.loopP99Ms)) * 10) / 10,
        loopMaxMs: Math.round(Math.max(0, ...probes.map((p) => p.loopMaxMs)) * 10) / 10,
        stored: receiver!.requests.filter((q) => q.outcome === 'stored' && q.receivedAt > rowStart && q.receivedAt <= rowEnd).length,
      };
      rows.push(row);
      options.onRow?.(row);
      return row;
    };
    while (Date.now() - began < options.durationMs) {
      const now = phaseAt(options, Date.now() - began);
      if (now !== phase) {
        phase = now;
        enter(now, Date.now());
      }
      await measureRow(now);
    }
    enter('settle', Date.now());
    const settleFrom = Date.now();
    const settleRows: SoakRow[] = [];
    while (Date.now() - settleFrom < options.settleMs && !settled(settleRows)) settleRows.push(await measureRow('settle'));
    phaseLog.at(-1)!.until = Date.now();

    const stopped = await stop(app, 'SIGTERM', 30_000);
    const after = rows.filter((r) => r.t * 1000 >= options.warmupMs);
    const healthy = phaseLog.slice(1).filter((p) => p.name === 'healthy');
    const stored = receiver.requests.filter((q) => q.outcome === 'stored');
    const allProbes = readProbe(probeFile).filter((p) => p.t - began >= options.warmupMs);
    const p99s = allProbes.map((p) => p.loopP99Ms).sort((a, b) => a - b);
    return {
      rows,
      trends: {
        rssMb: trend(after, (r) => r.rssMb),
        liveHeapMb: trend(after, (r) => r.liveHeapMb),
        outsideHeapMb: trend(after, (r) => r.outsideHeapMb),
        fds: trend(after, (r) => r.fds),
        handles: trend(after, (r) => r.handles),
      },
      outsideHeapGrowth: outsideHeapGrowth(rows),
      requests,
      healthyPhases: healthy.length,
      healthyPhasesWithoutDelivery: healthy.filter((p) => !stored.some((q) => q.receivedAt >= p.from && q.receivedAt < p.until)).length,
      shutdown: { ms: stopped.ms, code: stopped.code, signal: stopped.signal },
      warnings: warnings(app.child.stderr),
      loopP99MedianMs: p99s[Math.floor(p99s.length / 2)] ?? Number.NaN,
      loopMaxMs: Math.max(0, ...allProbes.map((p) => p.loopMaxMs)),
    };
  } finally {
    if (app && app.child.process.exitCode === null && app.child.process.signalCode === null) app.child.process.kill('SIGKILL');
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const COLUMNS: [keyof SoakRow, string][] = [
  ['t', 't(s)'],
  ['phase', 'backend'],
  ['reqPerSec', 'req/s'],
  ['p99Ms', 'p99 ms'],
  ['rssMb', 'RSS MB'],
  ['liveHeapMb', 'live heap MB'],
  ['outsideHeapMb', 'ext+buf MB'],
  ['fds', 'fds'],
  ['handles', 'handles'],
  ['loopP99Ms', 'loop p99'],
  ['loopMaxMs', 'loop max'],
  ['stored', 'stored'],
];

export function tableHeader(): string {
  return COLUMNS.map(([, title]) => title.padStart(12)).join('');
}

export function tableRow(row: SoakRow): string {
  return COLUMNS.map(([key]) => String(row[key]).padStart(12)).join('');
}
