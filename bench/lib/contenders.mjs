// The five ways to run the same app, and the environment they share. Every exporter points at
// the local sink, so network cost is equal; flush and sampling intervals are pyro-run's defaults.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { registerPathOf } from './register-path.mjs';

export const BENCH = path.resolve(import.meta.dirname, '..');
export const REPO = path.resolve(BENCH, '..');

/** Node binaries from devDependencies, never the machine's own `node`. */
export const NODE = {
  22: path.join(REPO, 'node_modules/node22/bin/node'),
  24: path.join(REPO, 'node_modules/node/bin/node'),
  26: path.join(REPO, 'node_modules/node26/bin/node'),
};

export const PYRO_REGISTER = registerPathOf(REPO);
const OTEL_REGISTER = fileURLToPath(import.meta.resolve('@opentelemetry/auto-instrumentations-node/register'));
const COMBO = path.join(BENCH, 'contenders/combo.mjs');

export const FLUSH_INTERVAL_MS = 15_000;
export const SAMPLING_INTERVAL_MICROS = 10_000;

/**
 * OTel's register would also start metric and log exporters (pyro-run sends neither unless asked):
 * turned off so every contender exports the same signal, traces.
 */
const TRACES_ONLY = { OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none' };

export const CONTENDERS = [
  { id: 'node', label: 'bare node', preload: [], env: {} },
  { id: 'otel', label: 'OTel register', preload: ['--import', OTEL_REGISTER], env: TRACES_ONLY },
  { id: 'combo', label: 'OTel + @pyroscope/nodejs', preload: ['--import', COMBO], env: TRACES_ONLY },
  { id: 'pyro-none', label: 'pyro-run, profiles off', preload: ['--import', PYRO_REGISTER], env: { PYRO_RUN_PROFILES: 'none' } },
  { id: 'pyro', label: 'pyro-run full', preload: ['--import', PYRO_REGISTER], env: {} },
];

/**
 * A/B of two builds in one run: PYRO_RUN_BENCH_BASELINE=<another checkout, built> adds its
 * pyro-run full as one more contender, measured side by side with this one.
 */
const BASELINE = process.env.PYRO_RUN_BENCH_BASELINE;
if (BASELINE) {
  CONTENDERS.push({
    id: 'pyro-baseline',
    label: `pyro-run full, ${path.basename(path.resolve(BASELINE))}`,
    preload: ['--import', registerPathOf(path.resolve(BASELINE))],
    env: {},
  });
}

/**
 * Datadog's tracer with its profiler, when PYRO_RUN_BENCH_DD_TRACE names a folder where `dd-trace`
 * is installed (`npm install dd-trace` there; not a devDependency: it brings native add-ons of its
 * own). Its profiler as pyro-run's: wall time with CPU time, no heap profile, a 15 s upload period;
 * traces and profiles go to the sink as to a Datadog agent (contenderEnv).
 */
const DD_TRACE = process.env.PYRO_RUN_BENCH_DD_TRACE;
if (DD_TRACE) {
  CONTENDERS.push({
    id: 'dd',
    label: 'dd-trace with its profiler',
    preload: ['--require', path.join(path.resolve(DD_TRACE), 'node_modules/dd-trace/init.js')],
    env: {
      DD_SERVICE: 'bench',
      DD_PROFILING_ENABLED: 'true',
      DD_PROFILING_PROFILERS: 'wall',
      DD_PROFILING_CPU_ENABLED: 'true',
      DD_PROFILING_UPLOAD_PERIOD: String(FLUSH_INTERVAL_MS / 1000),
      DD_TRACE_STARTUP_LOGS: 'false',
    },
  });
}

/** Where the local-mode contender records (the throughput bench empties it after its run). */
export const LOCAL_RECORDINGS = path.join(os.tmpdir(), 'pyro-run-bench-local');

/**
 * Measured side by side only: pyro-run full recording locally (issue 14's "local mode costs no
 * more than remote mode"), spans and profiles written to disk instead of sent to the sink; and
 * pyro-run full with the heap profile on (what it costs, which decides whether it is on by default).
 */
export const SIDE_ONLY = [
  {
    id: 'pyro-local',
    label: 'pyro-run full, local mode',
    preload: ['--import', PYRO_REGISTER],
    env: { PYRO_RUN_OUTPUT_DIR: LOCAL_RECORDINGS, PYRO_RUN_QUIET: 'on' },
  },
  { id: 'pyro-heap', label: 'pyro-run full + heap profile', preload: ['--import', PYRO_REGISTER], env: { PYRO_RUN_PROFILES: 'cpu,wall,heap' } },
];

export const byId = (id) => [...CONTENDERS, ...SIDE_ONLY, SAMPLER_ALONE, PROFILES_OFF_SAMPLER].find((c) => c.id === id);

/** `id` or `id@{json env}` (`'pyro@{"OTEL_NODE_DISABLED_INSTRUMENTATIONS":"router"}'`) as a contender, its extra env on top of its own; undefined for an unknown id. */
export function contenderOf(spec) {
  const at = spec.indexOf('@');
  const base = byId(at === -1 ? spec : spec.slice(0, at));
  if (!base) return undefined;
  return { ...base, id: spec, label: spec, env: { ...base.env, ...(at === -1 ? {} : JSON.parse(spec.slice(at + 1))) } };
}

/**
 * pyro-run's preload loaded with its agent skipped for `script` (PYRO_RUN_SKIP): what loading the
 * preload alone moves, next to the contenders that run the agent.
 */
export const preloadOnly = (script) => ({
  id: 'pyro-skip',
  label: 'pyro-run preloaded, agent skipped',
  preload: ['--import', PYRO_REGISTER],
  env: { PYRO_RUN_SKIP: path.basename(script) },
});

/**
 * V8's sampling profiler alone, as @datadog/pprof drives it (contenders/sampler-alone.mjs): no
 * span contexts, no export — what any V8-based Node profiler costs before pyro-run's part.
 */
export const SAMPLER_ALONE = {
  id: 'sampler',
  label: 'V8 sampler alone, 10 ms',
  preload: ['--import', path.join(BENCH, 'contenders/sampler-alone.mjs')],
  env: {},
};

/**
 * pyro-run with profiles off and V8's sampler alone beside it: against `pyro-none`, what V8's
 * profiler costs on a traced app; `pyro` against it, what pyro-run's profiling adds beyond V8's
 * (contexts, linking, the block watch, windows and their export).
 */
export const PROFILES_OFF_SAMPLER = {
  id: 'pyro-none-sampler',
  label: 'pyro-run, profiles off, + V8 sampler alone',
  preload: ['--import', PYRO_REGISTER, ...SAMPLER_ALONE.preload],
  env: { PYRO_RUN_PROFILES: 'none' },
};

/** The runner's environment without anything that would configure a contender behind our back. */
export function cleanEnv() {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(NODE_OPTIONS|OTEL_|PYROSCOPE_|PYRO_RUN_|DD_|DEBUG$)/.test(key)) continue;
    env[key] = value;
  }
  return env;
}

/**
 * The environment of contender `c` sending to the sink at `sinkUrl`. Resource detectors are the
 * NodeSDK's own default set (what pyro-run uses) for everyone: OTel's register would otherwise run
 * its cloud detectors, which probe metadata addresses off this machine and cost start time.
 */
export function contenderEnv(c, sinkUrl, extra = {}) {
  return {
    ...cleanEnv(),
    OTEL_SERVICE_NAME: 'bench',
    OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl,
    PYROSCOPE_SERVER_ADDRESS: sinkUrl,
    DD_TRACE_AGENT_URL: sinkUrl,
    PYROSCOPE_FLUSH_INTERVAL_MS: String(FLUSH_INTERVAL_MS),
    PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS: String(SAMPLING_INTERVAL_MICROS),
    OTEL_NODE_RESOURCE_DETECTORS: 'env,process,host',
    ...c.env,
    ...extra,
  };
}

/** node args for running `app` as contender `c`, with extra node flags (probes) first. */
export const contenderArgs = (c, app, nodeFlags = []) => [...nodeFlags, ...c.preload, app];

const versions = new Map();
/** `v24.21.0` of a Node binary, asked once. */
export function nodeVersion(bin) {
  if (!versions.has(bin)) versions.set(bin, execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim());
  return versions.get(bin);
}
