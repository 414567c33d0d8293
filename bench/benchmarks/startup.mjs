// startup: spawn → first line of a hello world, and the RSS it reports at that moment, for a CJS
// and an ESM app; and, for a server, spawn → first HTTP response, which also counts what an agent
// does in the app's first turns of the event loop (pyro-run loads its upload path there). What
// matters is what each contender adds to bare node, so each round's value is paired with bare
// node's value of the same round before taking medians.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { APP_CORE } from '../lib/cores.mjs';
import { BENCH, CONTENDERS, NODE, contenderArgs, contenderEnv, nodeVersion } from '../lib/contenders.mjs';
import { goal } from '../lib/goals.mjs';
import { interleave } from '../lib/interleave.mjs';
import { childrenCpuMs, rssMbOf, start } from '../lib/proc.mjs';
import { startSink } from '../lib/sink.mjs';
import { ratio, summary } from '../lib/stats.mjs';
import { num, render, signed, spread, times } from '../lib/table.mjs';

/**
 * The hello worlds as a script of its own is: copied to a folder outside this repository, where
 * no package is installed, and run from there. pyro-run loads an instrumentation only where the
 * app (its script's folder, its working directory) can resolve what it instruments
 * (src/tracing/instrumentations.ts); from bench/apps it resolves every package this repository
 * installs for its tests, and loads nearly all of them.
 */
const ALONE = mkdtempSync(path.join(os.tmpdir(), 'pyro-run-bench-hello-'));
process.once('exit', () => rmSync(ALONE, { recursive: true, force: true }));
for (const file of ['hello.cjs', 'hello.mjs']) copyFileSync(path.join(BENCH, 'apps', file), path.join(ALONE, file));

/** The goals are about the hello worlds of their own; the others are for information. */
const APPS = [
  { id: 'cjs', file: path.join(ALONE, 'hello.cjs'), cwd: ALONE, goals: true },
  { id: 'esm', file: path.join(ALONE, 'hello.mjs'), cwd: ALONE, goals: true },
  { id: 'cjs-in-repo', file: path.join(BENCH, 'apps/hello.cjs') },
  { id: 'express', file: path.join(BENCH, 'apps/express.cjs'), server: true },
  // As copied from OTel docs: no metrics, no logs. Must cost what leaving them unset costs.
  { id: 'express-none', file: path.join(BENCH, 'apps/express.cjs'), server: true, env: { OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none' } },
];

/**
 * A whole short-lived process (a script, a test runner's worker): spawn → exit, and its CPU time
 * with every thread's. Only for the contenders whose process ends by itself (OTel's register and
 * the combo keep the event loop alive).
 */
const WHOLE_APPS = APPS.filter((app) => !app.server);
const EXITS_BY_ITSELF = CONTENDERS.filter((c) => ['node', 'pyro-none', 'pyro', 'pyro-baseline'].includes(c.id));

async function measureWhole(contender, app, sinkUrl) {
  const cpuBefore = childrenCpuMs();
  const handle = start(NODE[24], contenderArgs(contender, app.file), {
    env: contenderEnv(contender, sinkUrl, app.env),
    cwd: app.cwd,
    core: APP_CORE,
    name: `${contender.id} ${app.id} to exit`,
  });
  const exit = await handle.exited;
  const at = process.hrtime.bigint();
  if (exit.code !== 0) throw new Error(`${handle.name}: exit ${JSON.stringify(exit)}\n${handle.stderr}`);
  return { wallMs: Number(at - handle.spawnedAt) / 1e6, cpuMs: childrenCpuMs() - cpuBefore };
}

async function measureOnce(contender, app, sinkUrl) {
  const handle = start(NODE[24], contenderArgs(contender, app.file), {
    env: contenderEnv(contender, sinkUrl, app.env),
    cwd: app.cwd,
    core: APP_CORE,
    name: `${contender.id} ${app.id}`,
  });
  try {
    if (app.server) {
      const { match } = await handle.line(/^listening (\d+)$/, 30_000);
      const response = await fetch(`http://127.0.0.1:${match[1]}/json`);
      await response.arrayBuffer();
      const at = process.hrtime.bigint();
      if (response.status !== 200) throw new Error(`${contender.id}: first response ${response.status}`);
      return { startMs: Number(at - handle.spawnedAt) / 1e6, rssMb: rssMbOf(handle.child.pid) };
    }
    const { match, at } = await handle.line(/^hello rss=(\d+)/, 30_000);
    return { startMs: Number(at - handle.spawnedAt) / 1e6, rssMb: Number(match[1]) / 2 ** 20 };
  } finally {
    // Killed, not left to exit: OTel's register and Pyroscope keep the loop alive, and what an
    // exit costs is not the question here.
    await handle.stop('SIGKILL');
  }
}

export default {
  name: 'startup',
  describe: 'spawn → first line and RSS of a hello world (CJS and ESM); spawn → exit and CPU of the whole process',
  async run({ quick, progress }) {
    const rounds = quick ? 2 : 10;
    const sink = await startSink();
    let raw;
    let rawWhole;
    try {
      const pairs = APPS.flatMap((app) => CONTENDERS.map((contender) => ({ app, contender })));
      raw = await interleave(
        rounds,
        pairs,
        (p) => `${p.app.id}/${p.contender.id}`,
        (p) => measureOnce(p.contender, p.app, sink.url),
        progress,
      );
      const wholePairs = WHOLE_APPS.flatMap((app) => EXITS_BY_ITSELF.map((contender) => ({ app, contender })));
      rawWhole = await interleave(
        rounds,
        wholePairs,
        (p) => `${p.app.id}/${p.contender.id} to exit`,
        (p) => measureWhole(p.contender, p.app, sink.url),
        progress,
      );
    } finally {
      await sink.stop();
    }

    const results = {};
    const rows = [];
    for (const app of APPS) {
      const base = raw[`${app.id}/node`];
      results[app.id] = {};
      for (const contender of CONTENDERS) {
        const runs = raw[`${app.id}/${contender.id}`];
        const start = summary(runs.map((r) => r.startMs));
        const rss = summary(runs.map((r) => r.rssMb));
        // Paired with the same round's bare node: drift between rounds cancels out.
        const addedStart = summary(runs.map((r, i) => r.startMs - base[i].startMs));
        const addedRss = summary(runs.map((r, i) => r.rssMb - base[i].rssMb));
        results[app.id][contender.id] = { start, rss, addedStart, addedRss, startRatio: ratio(start.median, summary(base.map((r) => r.startMs)).median) };
        rows.push([
          app.id,
          contender.label,
          spread(start),
          signed(addedStart.median),
          times(results[app.id][contender.id].startRatio),
          spread(rss),
          signed(addedRss.median),
        ]);
      }
    }
    const table = render(
      `startup — Node ${nodeVersion(NODE[24])}, ${rounds} rounds interleaved; medians (min–max); "added" = median of per-round differences to bare node; cjs/esm: spawn → first line of a hello world in a folder of its own and its RSS then; cjs-in-repo: the same from bench/apps, where every package of this repository resolves; express: spawn → first HTTP response and RSS then; express-none: the same with OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none`,
      ['app', 'contender', 'start ms', 'added ms', '× node', 'RSS MB', 'added MB'],
      rows,
    );

    const whole = {};
    const wholeRows = [];
    for (const app of WHOLE_APPS) {
      const base = rawWhole[`${app.id}/node to exit`];
      whole[app.id] = {};
      for (const contender of EXITS_BY_ITSELF) {
        const runs = rawWhole[`${app.id}/${contender.id} to exit`];
        const r = {
          wall: summary(runs.map((x) => x.wallMs)),
          cpu: summary(runs.map((x) => x.cpuMs)),
          addedWall: summary(runs.map((x, i) => x.wallMs - base[i].wallMs)),
          addedCpu: summary(runs.map((x, i) => x.cpuMs - base[i].cpuMs)),
        };
        whole[app.id][contender.id] = r;
        wholeRows.push([app.id, contender.label, spread(r.wall, 0), signed(r.addedWall.median, 0), spread(r.cpu, 0), signed(r.addedCpu.median, 0)]);
      }
    }
    const wholeTable = render(
      `startup, whole process — Node ${nodeVersion(NODE[24])}, ${rounds} rounds interleaved; a hello world from spawn to exit (the final flush to the sink included) and its CPU time, all threads (kernel accounting, 10 ms ticks); medians (min–max); "added" = median of per-round differences to bare node`,
      ['app', 'contender', 'wall ms', 'added ms', 'CPU ms', 'added ms'],
      wholeRows,
    );

    const goals = [];
    const shares = {};
    for (const app of APPS.filter((a) => a.goals)) {
      const r = results[app.id];
      const startShare = ratio(r.pyro.addedStart.median, r.otel.addedStart.median);
      const rssShare = ratio(r.pyro.addedRss.median, r.combo.addedRss.median);
      shares[app.id] = { startShare, rssShare };
      goals.push(
        goal(
          `startup ${app.id}: pyro-run's added start ≤ 25% of OTel register's`,
          startShare <= 0.25,
          `${num(r.pyro.addedStart.median, 0)} ms vs ${num(r.otel.addedStart.median, 0)} ms = ${num(startShare * 100, 0)}%`,
        ),
      );
      goals.push(
        goal(
          `startup ${app.id}: pyro-run's added RSS ≤ 50% of the combo's`,
          rssShare <= 0.5,
          `${num(r.pyro.addedRss.median, 1)} MB vs ${num(r.combo.addedRss.median, 1)} MB = ${num(rssShare * 100, 0)}%`,
        ),
      );
    }
    const noneRatio = ratio(results['express-none'].pyro.start.median, results.express.pyro.start.median);
    goals.push(
      goal(
        'startup express: pyro-run with OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none ≤ 1.25× of pyro-run without them',
        noneRatio <= 1.25,
        `${num(results['express-none'].pyro.start.median, 0)} ms vs ${num(results.express.pyro.start.median, 0)} ms = ${times(noneRatio)}`,
      ),
    );
    const s = (id) =>
      `${id}: pyro-run +${num(results[id].pyro.addedStart.median, 0)} ms / +${num(results[id].pyro.addedRss.median, 0)} MB, OTel +${num(results[id].otel.addedStart.median, 0)} ms, combo +${num(results[id].combo.addedRss.median, 0)} MB`;
    return {
      tables: [table, wholeTable],
      goals,
      summary: `startup (${rounds} rounds) ${APPS.map((a) => s(a.id)).join('; ')}`,
      data: { rounds, node: nodeVersion(NODE[24]), results, whole, shares, noneRatio, raw, rawWhole },
    };
  },
};
