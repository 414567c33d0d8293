// throughput: an express 5 app and a plain node:http app, each request doing the same bit of
// arithmetic, under wrk at fixed concurrency. Each measured run follows a warm-up on the same
// process (JIT, instrumentation patches, first span batches) and its own process start.
//
// Two phases. Interleaved rounds give each contender's req/s and latency alone on the app core
// (the table, and the p99 goal). Then pairs run side by side on that core (lib/side-by-side.mjs):
// their ratio of requests per CPU second is what the req/s goals are judged on, because it does
// not move with the machine's speed between runs the way back-to-back runs do.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { launchApp } from '../lib/app.mjs';
import { APP_CORE } from '../lib/cores.mjs';
import { BENCH, CONTENDERS, FLUSH_INTERVAL_MS, LOCAL_RECORDINGS, NODE, byId, nodeVersion } from '../lib/contenders.mjs';
import { goal } from '../lib/goals.mjs';
import { watchCore } from '../lib/interference.mjs';
import { interleave } from '../lib/interleave.mjs';
import { STEADY_WARMUP_SECONDS, sideBySide } from '../lib/side-by-side.mjs';
import { startSink } from '../lib/sink.mjs';
import { ratio, summary } from '../lib/stats.mjs';
import { num, render, spread, times } from '../lib/table.mjs';
import { findWrk, wrk } from '../lib/wrk.mjs';

const APPS = [
  { id: 'express', file: path.join(BENCH, 'apps/express.cjs') },
  { id: 'http', file: path.join(BENCH, 'apps/http.cjs') },
];
const CONNECTIONS = 16;
/**
 * Side-by-side pairs, [a, b]: a's cost against b's. Full against the combo and against profiles
 * off are the goals; profiles off against OTel's register is the tracing part alone, and the
 * combo against OTel's register what a V8 sampling profiler costs without linking; local mode
 * against remote what writing the recording costs next to sending; the heap profile on against
 * off what V8's sampling heap profiler costs (no goal: it is opt-in because of it, docs/memory.md).
 */
const SIDE_PAIRS = [
  ['pyro', 'combo'],
  ['pyro', 'pyro-none'],
  ['pyro-none', 'otel'],
  ['combo', 'otel'],
  ['pyro-local', 'pyro'],
  ['pyro-heap', 'pyro'],
];

/** `test(value)`, or undefined (not judged) where the value could not be measured (no /proc). */
const judged = (value, test) => (Number.isFinite(value) ? test(value) : undefined);

/** a[i].field / b[i].field for each round i: two runs made back to back. */
const paired = (a, b, field) => summary(a.map((run, i) => ratio(run[field], b[i]?.[field])));

async function measureOnce(bin, contender, app, sink, { seconds, warmupSeconds }) {
  const { handle, url } = await launchApp(contender, app.file, { sinkUrl: sink.url });
  try {
    await wrk(bin, `${url}/json`, { connections: CONNECTIONS, seconds: warmupSeconds });
    const from = Date.now();
    const watch = watchCore(APP_CORE, handle.child.pid);
    const result = await wrk(bin, `${url}/json`, { connections: CONNECTIONS, seconds });
    const others = watch.end();
    // What reached the sink during the measured run: proof that each contender really exported.
    const got = sink.tally(from);
    return { ...result, others, spanBytes: got['/v1/traces']?.bytes ?? 0, profileBytes: got['/ingest']?.bytes ?? 0 };
  } finally {
    // SIGKILL: OTel's register ignores SIGTERM, and shutdown cost is not what is measured.
    await handle.stop('SIGKILL');
  }
}

export default {
  name: 'throughput',
  describe: `req/s and p50/p99 latency of express and node:http apps under wrk (-c${CONNECTIONS})`,
  async run({ quick, progress }) {
    const bin = findWrk();
    if (!bin) return { skipped: 'wrk not found on PATH; install it (Debian: apt-get install wrk) to run this benchmark' };
    const rounds = quick ? 1 : 5;
    // Full runs measure exactly one flush interval (15 s): whatever the offset, each measured run
    // then holds one profile flush of each profiler — the first, which costs more than later ones
    // (the start-up's code is in its window), so this errs against the profilers.
    const timing = quick ? { seconds: 2, warmupSeconds: 1 } : { seconds: FLUSH_INTERVAL_MS / 1000, warmupSeconds: 3 };
    // Side by side spreads over ±1–3%, so fewer rounds place the ratio; measured in the steady state
    // (lib/side-by-side.mjs), over one flush interval, which holds one flush.
    const sideRounds = quick ? 1 : 4;
    const sideTiming = quick ? { seconds: 2, warmupSeconds: 1 } : { seconds: FLUSH_INTERVAL_MS / 1000, warmupSeconds: STEADY_WARMUP_SECONDS };
    const sideKey = (appId, a, b) => `${appId}/${a}~${b}`;
    const sink = await startSink();
    let raw;
    let side;
    try {
      const pairs = APPS.flatMap((app) => CONTENDERS.map((contender) => ({ app, contender })));
      raw = await interleave(
        rounds,
        pairs,
        (p) => `${p.app.id}/${p.contender.id}`,
        (p) => measureOnce(bin, p.contender, p.app, sink, timing),
        progress,
      );
      const sidePairs = APPS.flatMap((app) => SIDE_PAIRS.map(([a, b]) => ({ app, a: byId(a), b: byId(b) })));
      side = await interleave(
        sideRounds,
        sidePairs,
        (p) => sideKey(p.app.id, p.a.id, p.b.id),
        (p, round) => sideBySide(bin, [p.a, p.b], p.app.file, sink.url, { ...sideTiming, connections: CONNECTIONS, round }),
        (what) => progress(`side by side, ${what}`),
      );
    } finally {
      await sink.stop();
      rmSync(LOCAL_RECORDINGS, { recursive: true, force: true });
    }

    const results = {};
    const rows = [];
    for (const app of APPS) {
      results[app.id] = {};
      const base = raw[`${app.id}/node`];
      const baseRps = summary(base.map((r) => r.rps)).median;
      const baseP99 = summary(base.map((r) => r.p99)).median;
      for (const contender of CONTENDERS) {
        const runs = raw[`${app.id}/${contender.id}`];
        const r = {
          rps: summary(runs.map((x) => x.rps)),
          p50: summary(runs.map((x) => x.p50)),
          p99: summary(runs.map((x) => x.p99)),
          failed: runs.reduce((sum, x) => sum + x.non2xx + x.socketErrors, 0),
          spanKb: summary(runs.map((x) => x.spanBytes / 1024)),
          profileKb: summary(runs.map((x) => x.profileBytes / 1024)),
          others: summary(runs.map((x) => x.others * 100)),
        };
        r.rpsRatio = ratio(r.rps.median, baseRps);
        r.p99Ratio = ratio(r.p99.median, baseP99);
        results[app.id][contender.id] = r;
        rows.push([
          app.id,
          contender.label,
          spread(r.rps, 0),
          times(r.rpsRatio),
          spread(r.p50, 2),
          spread(r.p99, 2),
          times(r.p99Ratio),
          num(r.spanKb.median, 0),
          num(r.profileKb.median, 0),
          String(r.failed),
          `${num(r.others.median, 0)} (${num(r.others.max, 0)})`,
        ]);
      }
    }
    const table = render(
      `throughput — Node ${nodeVersion(NODE[24])}, wrk -t1 -c${CONNECTIONS} -d${timing.seconds}s after a ${timing.warmupSeconds} s warm-up, ${rounds} round(s) interleaved; medians (min–max); × = against bare node`,
      ['app', 'contender', 'req/s', '× node', 'p50 ms', 'p99 ms', 'p99 × node', 'spans KB', 'profiles KB', 'errors', 'others on app core % (max)'],
      rows,
    );

    // Interleaved: each round's ratio pairs runs made back to back, and the median of the rounds'
    // ratios is what the table shows (each contender's own median, above, can come from another
    // round). The p99 goal is judged here: latency needs the app alone on its core.
    const goals = [];
    const pairedRows = [];
    const sideRows = [];
    for (const app of APPS) {
      const runs = (id) => raw[`${app.id}/${id}`];
      const vsCombo = paired(runs('pyro'), runs('combo'), 'rps');
      const vsNone = paired(runs('pyro'), runs('pyro-none'), 'rps');
      const p99VsNone = paired(runs('pyro'), runs('pyro-none'), 'p99');
      const noneVsOtel = paired(runs('pyro-none'), runs('otel'), 'rps');
      const comboVsOtel = paired(runs('combo'), runs('otel'), 'rps');
      pairedRows.push([app.id, spread(vsCombo, 3), spread(vsNone, 3), spread(p99VsNone, 3), spread(noneVsOtel, 3), spread(comboVsOtel, 3)]);

      // Side by side: requests per CPU second of a over b, per pair.
      const sideOf = {};
      for (const [a, b] of SIDE_PAIRS) {
        const pairRounds = side[sideKey(app.id, a, b)];
        const pair = {
          perCpu: summary(pairRounds.map((r) => r.perCpu)),
          rps: summary(pairRounds.map((r) => r.rps)),
          cpuMicros: { [a]: summary(pairRounds.map((r) => r.a.cpuMicrosPerRequest)), [b]: summary(pairRounds.map((r) => r.b.cpuMicrosPerRequest)) },
          failed: pairRounds.reduce((sum, r) => sum + r.a.failed + r.b.failed, 0),
        };
        sideOf[`${a}~${b}`] = pair;
        sideRows.push([
          app.id,
          `${byId(a).label} / ${byId(b).label}`,
          spread(pair.perCpu, 3),
          spread(pair.rps, 3),
          `${num(pair.cpuMicros[a].median, 0)} / ${num(pair.cpuMicros[b].median, 0)}`,
          String(pair.failed),
        ]);
      }
      Object.assign(results[app.id], { paired: { vsCombo, vsNone, p99VsNone, noneVsOtel, comboVsOtel }, side: sideOf });

      const sideVsCombo = sideOf['pyro~combo'].perCpu;
      const sideVsNone = sideOf['pyro~pyro-none'].perCpu;
      const cpuCost = 1 - sideVsNone.median;
      const p99Cost = p99VsNone.median - 1;
      goals.push(
        goal(
          `throughput ${app.id}: pyro-run full ≥ 1.00× the combo (requests per CPU second, side by side)`,
          judged(sideVsCombo.median, (v) => v >= 1),
          `${times(sideVsCombo.median)} (rounds ${spread(sideVsCombo, 3)}; interleaved req/s ${spread(vsCombo, 3)})`,
        ),
      );
      goals.push(
        goal(
          `throughput ${app.id}: profiling and linking cost ≤ 3% (full vs profiles off, requests per CPU second, side by side)`,
          judged(cpuCost, (v) => v <= 0.03),
          `${num(cpuCost * 100, 1)}% fewer (rounds ${spread(sideVsNone, 3)}; interleaved req/s ${spread(vsNone, 3)})`,
        ),
      );
      const localVsRemote = sideOf['pyro-local~pyro'].perCpu;
      goals.push(
        goal(
          `throughput ${app.id}: local mode costs no more than remote mode (requests per CPU second ≥ 0.97×, the method's resolution; side by side)`,
          judged(localVsRemote.median, (v) => v >= 0.97),
          `${times(localVsRemote.median)} (rounds ${spread(localVsRemote, 3)})`,
        ),
      );
      goals.push(
        goal(
          `throughput ${app.id}: profiling and linking cost ≤ 5% p99 (full vs profiles off, interleaved)`,
          p99Cost <= 0.05,
          `${num(p99Cost * 100, 1)}% higher (rounds' full/off ${spread(p99VsNone, 3)})`,
        ),
      );
    }
    const pairedTable = render(
      `throughput — interleaved: ratios of runs paired within each round; median (min–max) over ${rounds} round(s); the p99 goal is judged on these`,
      ['app', 'full / combo req/s', 'full / off req/s', 'full / off p99', 'off / OTel req/s', 'combo / OTel req/s'],
      pairedRows,
    );
    const sideTable = render(
      `throughput — side by side: two apps at once on the app core, wrk -c${CONNECTIONS} each, ${sideTiming.seconds} s after ${sideTiming.warmupSeconds} s of warm-up, ${sideRounds} round(s); a / b of requests per CPU second (above 1: a is cheaper) and of req/s; the req/s goals are judged on the first column`,
      ['app', 'a / b', 'requests per CPU s', 'req/s', 'CPU µs per request a / b', 'errors'],
      sideRows,
    );
    const s = (id) =>
      `${id} pyro-run ${num(results[id].pyro.rps.median, 0)} req/s alone = ${times(results[id].pyro.rpsRatio)} node; side by side ${times(results[id].side['pyro~combo'].perCpu.median)} combo, ${times(results[id].side['pyro~pyro-none'].perCpu.median)} profiles off`;
    return {
      tables: [table, pairedTable, sideTable],
      goals,
      summary: `throughput (${rounds} round(s) × ${timing.seconds} s; side by side ${sideRounds} × ${sideTiming.seconds} s): ${APPS.map((a) => s(a.id)).join('; ')}`,
      data: { rounds, timing, sideRounds, sideTiming, connections: CONNECTIONS, node: nodeVersion(NODE[24]), results, raw, side },
    };
  },
};
