// Bench-only preload: one CPU profile of the app under load, taken in its own process through the
// inspector (V8's sampling profiler, the one `--cpu-prof` uses), with the HTTP requests the app
// received while it ran. The window starts BENCH_CPU_PROFILE_AFTER_MS after the app's first request
// (the warm-up) and lasts BENCH_CPU_PROFILE_MS; the profile goes to BENCH_CPU_PROFILE_FILE as
// `{ requests, profile }`, and then the line `bench cpu profile written` on stdout.
const { subscribe } = require('node:diagnostics_channel');
const { writeFileSync } = require('node:fs');
const { Session } = require('node:inspector');

const file = process.env.BENCH_CPU_PROFILE_FILE;
const afterMs = Number(process.env.BENCH_CPU_PROFILE_AFTER_MS ?? 10_000);
const windowMs = Number(process.env.BENCH_CPU_PROFILE_MS ?? 12_000);
// V8's default, `--cpu-prof`'s too: at 100 µs its profiler thread took ~30% of the app's core here,
// on the same core as the app and in the figures.
const intervalMicros = Number(process.env.BENCH_CPU_PROFILE_INTERVAL_MICROS ?? 1000);
// Node publishes every request an http server receives here (its diagnostics_channel docs).
const REQUEST_START = 'http.server.request.start';

let requests = 0;
let warming = false;
let profiling = false;

if (file) {
  subscribe(REQUEST_START, () => {
    if (profiling) requests++;
    else if (!warming) {
      warming = true;
      setTimeout(profile, afterMs).unref();
    }
  });
}

function profile() {
  const session = new Session();
  session.connect();
  const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
  post('Profiler.enable')
    .then(() => post('Profiler.setSamplingInterval', { interval: intervalMicros }))
    .then(() => post('Profiler.start'))
    .then(() => {
      profiling = true;
      setTimeout(() => {
        profiling = false;
        post('Profiler.stop').then(({ profile }) => {
          writeFileSync(file, JSON.stringify({ requests, profile }));
          process.stdout.write('bench cpu profile written\n');
        });
      }, windowMs).unref();
    });
}
