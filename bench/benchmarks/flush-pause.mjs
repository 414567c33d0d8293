// flush pause: does cutting, serializing, compressing and uploading a profile window stall the
// app? pyro-run full (and, for reference, the combo) serve the express app under wrk while a
// bench-only preload records event-loop delay per 250 ms slice. Slices around each profile upload
// seen by the sink are "flush" slices; the rest are the baseline under the same load. A flush spans
// several slices, so its worst slice is compared with the worst slice of stretches of as many
// consecutive quiet slices (the median over all such stretches): the maximum of four slices is
// higher than a single slice's even when nothing happens.
//
// That comparison carries the machine's noise and the app's own GC. pyro-run also says, per window
// (at debug level), how long it held the loop itself: the longest stop of the sampler (its gathers
// and its cut), and the longest of the slices its encoding ran in. Those are read from its stderr and reported next to the loop delay.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launchApp } from '../lib/app.mjs';
import { APP_CORE } from '../lib/cores.mjs';
import { BENCH, byId, FLUSH_INTERVAL_MS, NODE, nodeVersion } from '../lib/contenders.mjs';
import { goal } from '../lib/goals.mjs';
import { watchCore } from '../lib/interference.mjs';
import { interleave } from '../lib/interleave.mjs';
import { startSink } from '../lib/sink.mjs';
import { max, median, percentile } from '../lib/stats.mjs';
import { num, render, signed } from '../lib/table.mjs';
import { readWindowCosts } from '../lib/window-costs.mjs';
import { findWrk, wrk } from '../lib/wrk.mjs';

const APP = path.join(BENCH, 'apps/express.cjs');
const PROBE = path.join(BENCH, 'probes/loop-delay.mjs');
const COST_PROBE = path.join(BENCH, 'probes/window-costs.mjs');
const CONNECTIONS = 16;
const GOAL_MS = 10;
/**
 * A flush occupies the loop before its upload reaches the sink (cut, encode, gzip, send), and a
 * pause is recorded in the slice that closes after it: slices overlapping [first upload − LEAD,
 * last upload + LAG] count as the flush's. Generous on purpose: a wider window can only make
 * flushes look worse.
 */
const LEAD_MS = 500;
const LAG_MS = 250;
/** Uploads closer than this belong to one flush (the CPU and the wall profile of a window). */
const SAME_FLUSH_MS = 500;

function readSlices(file) {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [from, to, maxMs, p99Ms, count] = line.split(' ').map(Number);
      return { from, to, maxMs, p99Ms, count };
    });
}

/**
 * Median, over every stretch of `k` consecutive slices none of which is in a flush, of the
 * stretch's worst slice: what the worst of `k` slices is under the same load without a flush.
 */
function quietStretchMax(slices, isQuiet, k) {
  const worst = [];
  for (let first = 0; first + k <= slices.length; first++) {
    const stretch = slices.slice(first, first + k);
    if (stretch.every(isQuiet)) worst.push(max(stretch.map((s) => s.maxMs)));
  }
  return median(worst);
}

/** Profile uploads grouped into flushes: [{ from, to, bytes }]. */
function flushesOf(events, from, to) {
  const flushes = [];
  for (const e of events) {
    if (e.path !== '/ingest' || e.at < from || e.at > to) continue;
    const last = flushes.at(-1);
    if (last && e.at - last.to <= SAME_FLUSH_MS) {
      last.to = e.at;
      last.bytes += e.bytes;
    } else flushes.push({ from: e.at, to: e.at, bytes: e.bytes });
  }
  return flushes;
}

async function measureOnce(bin, contender, sink, { seconds, warmupSeconds, flushMs }) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pyro-bench-pause-'));
  const file = path.join(dir, 'slices.txt');
  const costFile = path.join(dir, 'window-costs.jsonl');
  try {
    const { handle, url } = await launchApp(contender, APP, {
      sinkUrl: sink.url,
      nodeFlags: ['--import', PROBE, '--import', COST_PROBE],
      extraEnv: { BENCH_LOOP_DELAY_FILE: file, BENCH_WINDOW_COST_FILE: costFile, PYROSCOPE_FLUSH_INTERVAL_MS: String(flushMs) },
    });
    let from;
    let to;
    let load;
    let others;
    let costsAtStart = 0;
    try {
      await wrk(bin, `${url}/json`, { connections: CONNECTIONS, seconds: warmupSeconds });
      from = Date.now();
      costsAtStart = readWindowCosts(costFile).length;
      const watch = watchCore(APP_CORE, handle.child.pid);
      load = await wrk(bin, `${url}/json`, { connections: CONNECTIONS, seconds });
      others = watch.end();
      to = Date.now();
    } finally {
      await handle.stop('SIGKILL');
    }
    const slices = readSlices(file).filter((s) => s.from >= from && s.to <= to);
    // Uploads shortly after the end still mark their slices as flush slices, not quiet ones.
    const seen = flushesOf(sink.events, from, to + LEAD_MS);
    const inFlush = (s) => seen.find((f) => s.to >= f.from - LEAD_MS && s.from <= f.to + LAG_MS);
    for (const f of seen) {
      const own = slices.filter((s) => inFlush(s) === f);
      f.slices = own.length;
      f.maxMs = max(own.map((s) => s.maxMs));
      f.quietMaxMs = quietStretchMax(slices, (s) => !inFlush(s), own.length);
      f.excessMs = f.maxMs - f.quietMaxMs;
    }
    // Windows are encoded, published and uploaded in order: the n-th cost published since the start
    // of the measurement is the n-th flush the sink saw since then.
    const own = readWindowCosts(costFile).slice(costsAtStart);
    seen.forEach((f, i) => {
      f.own = own[i];
    });
    const flushes = seen.filter((f) => Number.isFinite(f.maxMs));
    const quiet = slices.filter((s) => !inFlush(s)).map((s) => s.maxMs);
    return {
      rps: load.rps,
      p99: load.p99,
      others,
      flushes,
      quiet: { slices: quiet.length, medianMaxMs: median(quiet), p99MaxMs: percentile(quiet, 99), maxMs: max(quiet) },
      slices,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export default {
  name: 'flush-pause',
  describe: 'event-loop delay around profile flushes, express app under wrk load',
  async run({ quick, progress }) {
    const bin = findWrk();
    if (!bin) return { skipped: 'wrk not found on PATH; install it (Debian: apt-get install wrk) to run this benchmark' };
    // At least two flushes inside the measured run, whatever the warm-up and start took.
    const timing = quick ? { flushMs: 2000, warmupSeconds: 1, seconds: 5 } : { flushMs: FLUSH_INTERVAL_MS, warmupSeconds: 3, seconds: 48 };
    const contenders = [byId('pyro'), byId('combo')];
    const sink = await startSink();
    let raw;
    try {
      raw = await interleave(
        1,
        contenders,
        (c) => c.id,
        (c) => measureOnce(bin, c, sink, timing),
        progress,
      );
    } finally {
      await sink.stop();
    }

    const results = {};
    const rows = [];
    for (const c of contenders) {
      const [r] = raw[c.id];
      const flushMax = max(r.flushes.map((f) => f.maxMs));
      const worst = r.flushes.reduce((w, f) => (w === undefined || f.excessMs > w.excessMs ? f : w), undefined);
      const excess = worst?.excessMs ?? Number.NaN;
      const own = r.flushes.map((f) => f.own).filter(Boolean);
      const ownHoldMs = own.length > 0 ? max(own.map((o) => Math.max(o.longestStopMs, o.longestSliceMs))) : Number.NaN;
      results[c.id] = {
        flushes: r.flushes.length,
        flushMaxMs: flushMax,
        perFlushMaxMs: r.flushes.map((f) => f.maxMs),
        excessMs: excess,
        worstQuietMaxMs: worst?.quietMaxMs,
        own,
        ownHoldMs,
        quiet: r.quiet,
        rps: r.rps,
        othersOnAppCore: r.others,
      };
      rows.push([
        c.label,
        String(r.flushes.length),
        r.flushes.map((f) => `${num(f.maxMs, 1)} (${num(f.quietMaxMs, 1)})`).join(', '),
        own.length > 0 ? own.map((o) => `${num(o.longestStopMs, 1)} / ${num(o.longestSliceMs, 1)}`).join(', ') : '–',
        num(r.quiet.medianMaxMs, 1),
        num(r.quiet.p99MaxMs, 1),
        num(r.quiet.maxMs, 1),
        signed(excess, 1),
        num(r.rps, 0),
        num(r.others * 100, 0),
      ]);
    }
    const table = render(
      `flush pause — Node ${nodeVersion(NODE[24])}, express under wrk -c${CONNECTIONS} for ${timing.seconds} s, flush every ${timing.flushMs} ms; event-loop delay max per 250 ms slice (ms, monitorEventLoopDelay at 1 ms resolution)`,
      [
        'contender',
        'flushes',
        'max delay in each flush (same stretch without a flush)',
        'own hold per flush: longest stop / longest slice',
        'other slices: median max',
        'p99 max',
        'max',
        'worst flush − its stretch',
        'req/s',
        'others on app core %',
      ],
      rows,
    );
    const pyro = results.pyro;
    const goals = [
      goal(
        `flush pause: pyro-run's own flush work holds the event loop ≤ ${GOAL_MS} ms at a time (each stop of the sampler; each slice of the encoding)`,
        pyro.own.length >= 2 ? pyro.ownHoldMs <= GOAL_MS : undefined,
        `${pyro.own.length} flushes; longest hold ${num(pyro.ownHoldMs, 1)} ms (stops at most ${num(max(pyro.own.map((o) => o.longestStopMs)), 1)} ms, slices at most ${num(max(pyro.own.map((o) => o.longestSliceMs)), 1)} ms)`,
      ),
      goal(
        `flush pause: a flush adds ≤ ${GOAL_MS} ms of event-loop delay (pyro-run full)`,
        pyro.flushes >= 2 ? pyro.excessMs <= GOAL_MS : undefined,
        `${pyro.flushes} flushes; worst ${signed(pyro.excessMs, 1)} ms over the median worst slice of as many consecutive slices without a flush (${num(pyro.worstQuietMaxMs, 1)} ms)`,
      ),
    ];
    return {
      tables: [table],
      goals,
      summary: `flush-pause (${timing.flushMs} ms windows): pyro-run's own longest hold ${num(pyro.ownHoldMs, 1)} ms; worst flush ${num(pyro.flushMaxMs, 1)} ms of loop delay (worst ${signed(pyro.excessMs, 1)} ms over as long a stretch without a flush), combo ${num(results.combo.flushMaxMs, 1)} ms (${signed(results.combo.excessMs, 1)} ms)`,
      data: { timing, connections: CONNECTIONS, leadMs: LEAD_MS, lagMs: LAG_MS, results, raw },
    };
  },
};
