// "The combo": what a user assembles without pyro-run — OpenTelemetry's auto-instrumentation
// register plus Grafana's @pyroscope/nodejs in the same process, sampling wall time with CPU time
// at the same interval and flushing at the same interval as pyro-run. It links no spans to samples.
//
// Only the wall profiler (which carries CPU time) is started, not Pyroscope.start(): that would also
// start the heap profiler, which pyro-run does not run, and the comparison is of the same work.
import '@opentelemetry/auto-instrumentations-node/register';
import Pyroscope from '@pyroscope/nodejs';

const flushIntervalMs = Number(process.env.PYROSCOPE_FLUSH_INTERVAL_MS ?? 15_000);

Pyroscope.init({
  appName: process.env.OTEL_SERVICE_NAME ?? 'bench',
  serverAddress: process.env.PYROSCOPE_SERVER_ADDRESS,
  flushIntervalMs,
  wall: {
    collectCpuTime: true,
    samplingIntervalMicros: Number(process.env.PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS ?? 10_000),
    // pyro-run gives the sampler the window length as its duration too.
    samplingDurationMs: flushIntervalMs,
  },
});
Pyroscope.startWallProfiling();
