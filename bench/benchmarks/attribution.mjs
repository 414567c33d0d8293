// attribution: how many CPU samples land on the right span. The repo's test workload compiles
// per-request functions hot_<seq>_<where> that burn CPU synchronously, after await, in a timer, in
// setImmediate, in a native callback and in an event emitter; a sample in hot_<seq>_* is right
// when it carries the span_id of the HTTP span that served /work/<seq>. Unlabelled samples in hot
// functions are misses. Recorded in local mode and read back from disk.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launchApp } from '../lib/app.mjs';
import { NODE, PYRO_REGISTER, REPO, cleanEnv, nodeVersion } from '../lib/contenders.mjs';
import { goal } from '../lib/goals.mjs';
import { interleave } from '../lib/interleave.mjs';
import { load } from '../lib/load.mjs';
import { cpuSamples, manifest, runDir, spans } from '../lib/recording.mjs';
import { num, render } from '../lib/table.mjs';

const APP = path.join(REPO, 'test/fixtures/apps/server.cjs');
const HOT_FRAME = /^hot_(\d+)_([a-z]+)$/;
const CONCURRENCY = [1, 16, 64];
/** Request numbers of concurrency level i start at (i + 1) × SEQ_BLOCK, so a seq names its level. */
const SEQ_BLOCK = 100_000;
const SERVER_KIND = 2;

const VARIANTS = [
  { id: 'node22', label: 'Node 22, no AsyncContextFrame', node: NODE[22], flags: [], acf: false, target: 0.99 },
  {
    id: 'node22-acf',
    label: 'Node 22, --experimental-async-context-frame',
    node: NODE[22],
    flags: ['--experimental-async-context-frame'],
    acf: true,
    target: 0.995,
  },
  { id: 'node24', label: 'Node 24', node: NODE[24], flags: [], acf: true, target: 0.995 },
  { id: 'node26', label: 'Node 26', node: NODE[26], flags: [], acf: true, target: 0.995 },
];

const PYRO = { id: 'pyro', preload: ['--import', PYRO_REGISTER] };

function env(outDir) {
  return {
    ...cleanEnv(),
    OTEL_SERVICE_NAME: 'bench-attribution',
    PYRO_RUN_OUTPUT_DIR: outDir,
    PYRO_RUN_QUIET: 'on',
    // debug: pyro-run says whether AsyncContextFrame carries the context, checked below.
    PYRO_RUN_LOG_LEVEL: 'debug',
    PYROSCOPE_FLUSH_INTERVAL_MS: '1000',
    // 2 ms sampling: ~9 samples per request, enough for a share to two decimals.
    PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS: '2000',
    OTEL_BSP_SCHEDULE_DELAY: '200',
    OTEL_NODE_RESOURCE_DETECTORS: 'env,process,host',
  };
}

/** Per concurrency level: hot-function samples that are right, wrong (another span), unlabelled. */
function score(run) {
  const spanOfSeq = new Map();
  for (const span of spans(run)) {
    const m = span.kind === SERVER_KIND ? span.path?.match(/^\/work\/(\d+)$/) : null;
    if (m) spanOfSeq.set(Number(m[1]), span.spanId);
  }
  const levels = Object.fromEntries(CONCURRENCY.map((c) => [c, { total: 0, right: 0, wrong: 0, unlabelled: 0, noSpan: 0, missByWhere: {} }]));
  for (const sample of cpuSamples(run)) {
    const frame = sample.stack.map((name) => name?.match(HOT_FRAME)).find(Boolean);
    if (!frame) continue;
    const seq = Number(frame[1]);
    const level = levels[CONCURRENCY[Math.floor(seq / SEQ_BLOCK) - 1]];
    if (!level) continue;
    const expected = spanOfSeq.get(seq);
    level.total += sample.count;
    if (expected === undefined) level.noSpan += sample.count;
    else if (sample.spanId === expected) level.right += sample.count;
    else if (sample.spanId === undefined) level.unlabelled += sample.count;
    else level.wrong += sample.count;
    if (sample.spanId !== expected) level.missByWhere[frame[2]] = (level.missByWhere[frame[2]] ?? 0) + sample.count;
  }
  return levels;
}

async function measureOnce(variant, requests) {
  const outDir = mkdtempSync(path.join(os.tmpdir(), 'pyro-bench-attr-'));
  try {
    const { handle, url } = await launchApp(PYRO, APP, { node: variant.node, nodeFlags: variant.flags, env: env(outDir) });
    try {
      for (const [i, concurrency] of CONCURRENCY.entries()) {
        const base = (i + 1) * SEQ_BLOCK;
        await load(url, (k) => `/work/${base + k}`, requests, concurrency);
      }
    } finally {
      // SIGTERM: pyro-run writes the last window and the pending spans, then the app dies of it.
      await handle.stop('SIGTERM', 20_000);
    }
    const acf = handle.stderr.match(/async context frame (true|false)/)?.[1];
    const run = runDir(outDir);
    return { acf: acf === undefined ? undefined : acf === 'true', complete: manifest(run).complete, levels: score(run) };
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

export default {
  name: 'attribution',
  describe: 'share of hot-function CPU samples labelled with their own request span, Node 22/24/26, c=1/16/64',
  async run({ quick, progress }) {
    const rounds = quick ? 1 : 2;
    const requests = quick ? 40 : 240;
    const raw = await interleave(
      rounds,
      VARIANTS,
      (v) => v.id,
      (v) => measureOnce(v, requests),
      progress,
    );

    const results = {};
    const rows = [];
    const goals = [];
    for (const variant of VARIANTS) {
      const runs = raw[variant.id];
      results[variant.id] = { label: variant.label, node: nodeVersion(variant.node), acfSeen: runs.map((r) => r.acf), levels: {} };
      let worst = Infinity;
      for (const c of CONCURRENCY) {
        // Pooled over rounds: the share of all hot samples, not a median of small shares.
        const sum = (key) => runs.reduce((s, r) => s + r.levels[c][key], 0);
        const cell = { total: sum('total'), right: sum('right'), wrong: sum('wrong'), unlabelled: sum('unlabelled'), noSpan: sum('noSpan') };
        cell.share = cell.total === 0 ? Number.NaN : cell.right / cell.total;
        cell.perRound = runs.map((r) => (r.levels[c].total === 0 ? Number.NaN : r.levels[c].right / r.levels[c].total));
        cell.missByWhere = runs.map((r) => r.levels[c].missByWhere);
        results[variant.id].levels[c] = cell;
        worst = Math.min(worst, Number.isNaN(cell.share) ? -Infinity : cell.share);
        const perRound = cell.perRound.length > 1 ? ` (${cell.perRound.map((s) => num(s * 100, 2)).join(', ')})` : '';
        rows.push([
          variant.label,
          String(c),
          `${num(cell.share * 100, 2)}${perRound}`,
          String(cell.total),
          String(cell.wrong),
          String(cell.unlabelled),
          String(cell.noSpan),
        ]);
      }
      const acfOk = runs.every((r) => r.acf === variant.acf);
      goals.push(
        goal(
          `attribution ${variant.label}: ≥ ${num(variant.target * 100, 1)}% at every concurrency`,
          worst >= variant.target && acfOk,
          `lowest ${num(worst * 100, 2)}%${acfOk ? '' : `; AsyncContextFrame was ${runs.map((r) => r.acf).join(',')}, expected ${variant.acf}`}`,
        ),
      );
    }
    const table = render(
      `attribution — pyro-run local mode, 2 ms sampling, ${requests} requests × 3 levels per run, ${rounds} round(s); share pooled over rounds (per round)`,
      ['variant', 'conc.', 'right %', 'hot samples', 'wrong span', 'unlabelled', 'span missing'],
      rows,
    );
    const lowest = (id) => Math.min(...CONCURRENCY.map((c) => results[id].levels[c].share));
    return {
      tables: [table],
      goals,
      summary: `attribution (${rounds} round(s)): lowest share ${VARIANTS.map((v) => `${v.id} ${num(lowest(v.id) * 100, 2)}%`).join(', ')}`,
      data: { rounds, requests, concurrency: CONCURRENCY, results, raw },
    };
  },
};
