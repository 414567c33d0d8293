// throughput: an express 5 app and a plain node:http app, each request doing the same bit of
// arithmetic, under wrk at fixed concurrency. Each measured run follows a warm-up on the same
// process (JIT, instrumentation patches, first span batches) and its own process start.
import path from 'node:path';
import { launchApp } from '../lib/app.mjs';
import { APP_CORE } from '../lib/cores.mjs';
import { BENCH, CONTENDERS, FLUSH_INTERVAL_MS, NODE, nodeVersion } from '../lib/contenders.mjs';
import { goal } from '../lib/goals.mjs';
import { watchCore } from '../lib/interference.mjs';
import { interleave } from '../lib/interleave.mjs';
import { startSink } from '../lib/sink.mjs';
import { ratio, summary } from '../lib/stats.mjs';
import { num, render, spread, times } from '../lib/table.mjs';
import { findWrk, wrk } from '../lib/wrk.mjs';

const APPS = [
  { id: 'express', file: path.join(BENCH, 'apps/express.cjs') },
  { id: 'http', file: path.join(BENCH, 'apps/http.cjs') },
];
const CONNECTIONS = 16;

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
    // then holds one profile flush of each profiler, the rate a long-running app pays.
    const timing = quick ? { seconds: 2, warmupSeconds: 1 } : { seconds: FLUSH_INTERVAL_MS / 1000, warmupSeconds: 3 };
    const sink = await startSink();
    let raw;
    try {
      const pairs = APPS.flatMap((app) => CONTENDERS.map((contender) => ({ app, contender })));
      raw = await interleave(rounds, pairs, (p) => `${p.app.id}/${p.contender.id}`, (p) => measureOnce(bin, p.contender, p.app, sink, timing), progress);
    } finally {
      await sink.stop();
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
        rows.push([app.id, contender.label, spread(r.rps, 0), times(r.rpsRatio), spread(r.p50, 2), spread(r.p99, 2), times(r.p99Ratio), num(r.spanKb.median, 0), num(r.profileKb.median, 0), String(r.failed), `${num(r.others.median, 0)} (${num(r.others.max, 0)})`]);
      }
    }
    const table = render(
      `throughput — Node ${nodeVersion(NODE[24])}, wrk -t1 -c${CONNECTIONS} -d${timing.seconds}s after a ${timing.warmupSeconds} s warm-up, ${rounds} round(s) interleaved; medians (min–max); × = against bare node`,
      ['app', 'contender', 'req/s', '× node', 'p50 ms', 'p99 ms', 'p99 × node', 'spans KB', 'profiles KB', 'errors', 'others on app core % (max)'],
      rows,
    );

    // The goals compare two contenders run minutes apart at most: each round's ratio pairs runs
    // made back to back, so drift between rounds cancels out, and the median of the rounds'
    // ratios is the verdict (the medians of each contender, in the table above, can come from
    // different rounds).
    const goals = [];
    const pairedRows = [];
    for (const app of APPS) {
      const runs = (id) => raw[`${app.id}/${id}`];
      const vsCombo = paired(runs('pyro'), runs('combo'), 'rps');
      const vsNone = paired(runs('pyro'), runs('pyro-none'), 'rps');
      const p99VsNone = paired(runs('pyro'), runs('pyro-none'), 'p99');
      const noneVsOtel = paired(runs('pyro-none'), runs('otel'), 'rps');
      const comboVsOtel = paired(runs('combo'), runs('otel'), 'rps');
      Object.assign(results[app.id], { paired: { vsCombo, vsNone, p99VsNone, noneVsOtel, comboVsOtel } });
      pairedRows.push([app.id, spread(vsCombo, 3), spread(vsNone, 3), spread(p99VsNone, 3), spread(noneVsOtel, 3), spread(comboVsOtel, 3)]);
      const rpsCost = 1 - vsNone.median;
      const p99Cost = p99VsNone.median - 1;
      goals.push(goal(`throughput ${app.id}: pyro-run full ≥ 1.00× the combo (req/s)`, vsCombo.median >= 1, `${times(vsCombo.median)} (rounds ${spread(vsCombo, 2)})`));
      goals.push(goal(`throughput ${app.id}: profiling and linking cost ≤ 3% req/s (full vs profiles off)`, rpsCost <= 0.03, `${num(rpsCost * 100, 1)}% fewer (rounds' full/off ${spread(vsNone, 3)})`));
      goals.push(goal(`throughput ${app.id}: profiling and linking cost ≤ 5% p99 (full vs profiles off)`, p99Cost <= 0.05, `${num(p99Cost * 100, 1)}% higher (rounds' full/off ${spread(p99VsNone, 3)})`));
    }
    const pairedTable = render(
      `throughput — ratios of runs paired within each round; median (min–max) over ${rounds} round(s): the goals are judged on these`,
      ['app', 'full / combo req/s', 'full / off req/s', 'full / off p99', 'off / OTel req/s', 'combo / OTel req/s'],
      pairedRows,
    );
    const s = (id) => `${id} pyro-run ${num(results[id].pyro.rps.median, 0)} req/s = ${times(results[id].paired.vsCombo.median)} combo, ${times(results[id].pyro.rpsRatio)} node`;
    return {
      tables: [table, pairedTable],
      goals,
      summary: `throughput (${rounds} round(s) × ${timing.seconds} s): ${APPS.map((a) => s(a.id)).join('; ')}`,
      data: { rounds, timing, connections: CONNECTIONS, node: nodeVersion(NODE[24]), results, raw },
    };
  },
};
