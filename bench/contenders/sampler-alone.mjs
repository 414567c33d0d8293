// V8's sampling profiler alone, as @datadog/pprof drives it: the time profiler at pyro-run's
// interval, no span contexts (so no CPU time either: @datadog/pprof reads it with them), no export — a window cut (stop with restart) at
// pyro-run's flush interval and the profile dropped. What any V8-based Node profiler costs before
// linking or sending (bench/sampler-floor.mjs).
import { time } from '@datadog/pprof';

const intervalMicros = Number(process.env.PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS ?? 10_000);
const windowMs = Number(process.env.PYROSCOPE_FLUSH_INTERVAL_MS ?? 15_000);

time.start({ intervalMicros, durationMillis: windowMs, withContexts: false, lineNumbers: false });
setInterval(() => time.stop(true), windowMs).unref();
