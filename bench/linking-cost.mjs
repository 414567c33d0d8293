// Linking's cost per request: `node bench/linking-cost.mjs [--rounds N]` (needs `npm run build`).
//
// A request-shaped span workload — a root span entered twice from outside it (as the http
// instrumentation does: the request handler, then the response's end), one child span per entry —
// runs in a fresh process per mode, the sampler running in each, with thread CPU time measured
// per iteration (5 × 100 000 after a warm-up of 100 000). Modes, cheapest first:
//   otel    OTel's own AsyncLocalStorage context manager, no span processor of ours;
//   labels  our span processor and context manager, with a sampler slot that does nothing
//           (span labels, pyroscope.profile.id, the lookups in with());
//   linked  the same, entering the sampler's frames (a @datadog/pprof holder per span change).
// Prints µs per iteration, median (min–max) over rounds, and what each mode adds to `otel`.
// Throughput benchmarks cannot resolve a cost this size (their run-to-run spread is ±8% here).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median, summary } from './lib/stats.mjs';
import { render, signed, spread } from './lib/table.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MODES = ['otel', 'labels', 'linked'];
const ITERATIONS = 100_000;
const REPEATS = 5;

async function measure(mode) {
  const dist = (file) => import(pathToFileURL(path.join(root, 'dist/src', file)).href);
  const { otelApi, otelContextAsyncHooks, otelSdkTrace } = await dist('vendor.js');
  const { Profiler } = await dist('profiler.js');
  const { LabelRegistry } = await dist('span-link/labels.js');
  const { SpanLinkProcessor } = await dist('span-link/processor.js');
  const { LinkingContextManager } = await dist('span-link/context.js');
  const { trace, context, ROOT_CONTEXT } = otelApi();

  const profiler = new Profiler({ types: ['cpu', 'wall'], samplingIntervalMicros: 10_000, flushIntervalMs: 15_000, traceIdLabel: false });
  profiler.start();
  const registry = new LabelRegistry();
  const inert = { set() {}, runWith: (_labels, fn) => fn() };
  const manager = mode === 'otel' ? new (otelContextAsyncHooks().AsyncLocalStorageContextManager)() : new LinkingContextManager(registry, mode === 'linked' ? profiler.sink : inert, profiler.frameCarriesContext);
  context.setGlobalContextManager(manager.enable());
  const spanProcessors = mode === 'otel' ? [] : [new SpanLinkProcessor(registry, 'root')];
  const tracer = new (otelSdkTrace().TracerProvider)({ spanProcessors }).getTracer('linking-cost');

  const request = () => {
    const span = tracer.startSpan('GET /orders/:id');
    const entered = trace.setSpan(ROOT_CONTEXT, span);
    for (let entry = 0; entry < 2; entry++) {
      context.with(entered, () => {
        const child = tracer.startSpan('middleware', undefined, context.active());
        context.with(trace.setSpan(context.active(), child), () => child.end());
      });
    }
    span.end();
  };
  const run = () => {
    for (let i = 0; i < ITERATIONS; i++) request();
  };
  run();
  const micros = [];
  for (let r = 0; r < REPEATS; r++) {
    const before = process.threadCpuUsage();
    run();
    const spent = process.threadCpuUsage(before);
    micros.push((spent.user + spent.system) / ITERATIONS);
  }
  profiler.cut(true);
  return micros;
}

const modeArg = process.argv.indexOf('--mode');
if (modeArg > 0) {
  process.stdout.write(`${JSON.stringify(await measure(process.argv[modeArg + 1]))}\n`);
} else {
  const roundsArg = process.argv.indexOf('--rounds');
  const rounds = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 3;
  if (!Number.isInteger(rounds) || rounds < 1) {
    process.stderr.write('usage: node bench/linking-cost.mjs [--rounds N (default 3)]\n');
    process.exit(2);
  }
  const perMode = Object.fromEntries(MODES.map((m) => [m, []]));
  for (let round = 0; round < rounds; round++) {
    for (const mode of MODES) {
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--mode', mode], { encoding: 'utf8' });
      perMode[mode].push(median(JSON.parse(out)));
    }
  }
  const base = median(perMode.otel);
  const rows = MODES.map((mode) => {
    const stat = summary(perMode[mode]);
    return [mode, spread(stat, 2), signed(stat.median - base, 2)];
  });
  process.stdout.write(`${render(`linking cost — Node ${process.version}, µs of thread CPU per request-shaped iteration; median (min–max) over ${rounds} round(s), a fresh process per mode`, ['mode', 'µs per iteration', 'added to otel'], rows)}\n`);
}
