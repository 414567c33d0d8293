// Linking's cost per request: `node bench/linking-cost.mjs [--rounds N]` (needs `npm run build`).
//
// Two request-shaped span workloads — a root span's context entered twice from outside it (as the
// http instrumentation does: the request handler, then the response's events), and with express
// also one child span entered per entry (middleware) — run in a fresh process per shape and mode,
// the sampler running in each, with thread CPU time measured per iteration (5 × 100 000 after a
// warm-up of 100 000, 16 per turn of the event loop). Modes, cheapest first:
//   otel    OTel's own AsyncLocalStorage context manager, no span processor of ours;
//   labels  our span processor and context manager, with a sampler slot that does nothing
//           (span labels, pyroscope.profile.id, the lookups in with());
//   linked  the same, the sampler reading the labels (a @datadog/pprof holder per labelled root
//           span and its frame key set when the labels change, or the global slot written at each
//           change without AsyncContextFrame).
// Prints µs per iteration, median (min–max) over rounds, and what each mode adds to `otel`.
// Interleaved throughput runs cannot resolve a cost this size (their run-to-run spread is ±8%
// here); side by side they resolve ~3% (A/A runs), and there linking costs several times what this
// script finds (docs/performance.md): a real app's heap, GC and caches are not in it.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median, summary } from './lib/stats.mjs';
import { render, signed, spread } from './lib/table.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MODES = ['otel', 'labels', 'linked'];
const SHAPES = ['http', 'express'];
const ITERATIONS = 100_000;
const REPEATS = 5;
/** Requests per turn of the event loop. */
const PER_TURN = 16;

async function measure(mode, shape) {
  const dist = (file) => import(pathToFileURL(path.join(root, 'dist/src', file)).href);
  const { otelApi, otelContextAsyncHooks, otelSdkTrace } = await dist('vendor.js');
  const { Profiler } = await dist('profiling/profiler.js');
  const { LabelRegistry } = await dist('span-link/labels.js');
  const { SpanLinkProcessor } = await dist('span-link/processor.js');
  const { AsyncContextManager } = await dist('tracing/context-manager.js');
  const { frameLinker } = await dist('span-link/frame-context.js');
  const { slotLinker } = await dist('span-link/slot-context.js');
  const { trace, context, ROOT_CONTEXT } = otelApi();

  const profiler = new Profiler({ types: ['cpu', 'wall'], samplingIntervalMicros: 10_000, flushIntervalMs: 15_000, traceIdLabel: false });
  profiler.start();
  const registry = new LabelRegistry();
  // `labels`: the sampler's slot stands in but holds nothing (no holders, no global writes).
  const frame = profiler.time.frameSlot;
  const frameSlot = frame && (mode === 'linked' ? frame : { key: frame.key, holder: () => undefined, samplesTaken: () => 0 });
  const globalSlot = mode === 'linked' ? profiler.time.globalSlot : { set() {}, samplesTaken: () => 0 };
  const manager = mode === 'otel' ? new (otelContextAsyncHooks().AsyncLocalStorageContextManager)() : new AsyncContextManager();
  if (mode !== 'otel') (frameSlot ? frameLinker(registry, frameSlot) : slotLinker(registry, globalSlot)).linkContext(manager);
  context.setGlobalContextManager(manager.enable());
  const spanProcessors = mode === 'otel' ? [] : [new SpanLinkProcessor(registry, 'root')];
  const tracer = new (otelSdkTrace().TracerProvider)({ spanProcessors }).getTracer('linking-cost');

  const request = () => {
    const span = tracer.startSpan('GET /orders/:id');
    const entered = trace.setSpan(ROOT_CONTEXT, span);
    for (let entry = 0; entry < 2; entry++) {
      context.with(entered, () => {
        if (shape !== 'express') return;
        const child = tracer.startSpan('middleware', undefined, context.active());
        context.with(trace.setSpan(context.active(), child), () => child.end());
      });
    }
    span.end();
  };
  // A few requests per turn of the event loop, as a server runs them: V8 keeps what a WeakRef
  // handed out alive until the current job ends, so one long synchronous loop would keep every
  // request's objects to its end.
  const run = async () => {
    for (let i = 0; i < ITERATIONS; i += PER_TURN) {
      for (let j = 0; j < PER_TURN; j++) request();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  await run();
  const micros = [];
  for (let r = 0; r < REPEATS; r++) {
    const before = process.threadCpuUsage();
    await run();
    const spent = process.threadCpuUsage(before);
    micros.push((spent.user + spent.system) / ITERATIONS);
  }
  profiler.cut(true);
  return micros;
}

const modeArg = process.argv.indexOf('--mode');
if (modeArg > 0) {
  process.stdout.write(`${JSON.stringify(await measure(process.argv[modeArg + 1], process.argv[process.argv.indexOf('--shape') + 1]))}\n`);
} else {
  const roundsArg = process.argv.indexOf('--rounds');
  const rounds = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 3;
  if (!Number.isInteger(rounds) || rounds < 1) {
    process.stderr.write('usage: node bench/linking-cost.mjs [--rounds N (default 3)]\n');
    process.exit(2);
  }
  const rows = [];
  for (const shape of SHAPES) {
    const perMode = Object.fromEntries(MODES.map((m) => [m, []]));
    for (let round = 0; round < rounds; round++) {
      for (const mode of MODES) {
        const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--mode', mode, '--shape', shape], { encoding: 'utf8' });
        perMode[mode].push(median(JSON.parse(out)));
      }
    }
    const base = median(perMode.otel);
    for (const mode of MODES) {
      const stat = summary(perMode[mode]);
      rows.push([shape, mode, spread(stat, 2), signed(stat.median - base, 2)]);
    }
  }
  process.stdout.write(
    `${render(`linking cost — Node ${process.version}, µs of thread CPU per request-shaped iteration; median (min–max) over ${rounds} round(s), a fresh process per shape and mode`, ['shape', 'mode', 'µs per iteration', 'added to otel'], rows)}\n`,
  );
}
