// Bench-only preload: event-loop delay inside the app, per 250 ms slice, written to the file named
// by BENCH_LOOP_DELAY_FILE as `<slice start ms> <slice end ms> <max ms> <p99 ms> <samples>` lines.
// Each slice is written as it closes (not at exit), so the record survives however the app ends.
import { openSync, writeSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const SLICE_MS = 250;
const file = process.env.BENCH_LOOP_DELAY_FILE;

if (file) {
  const fd = openSync(file, 'w');
  // 1 ms resolution: the histogram's timer fires every millisecond, so a pause is seen to ~1 ms.
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  let sliceStart = Date.now();
  const close = () => {
    const now = Date.now();
    const max = histogram.count > 0 ? histogram.max / 1e6 : 0;
    const p99 = histogram.count > 0 ? histogram.percentile(99) / 1e6 : 0;
    writeSync(fd, `${sliceStart} ${now} ${max.toFixed(3)} ${p99.toFixed(3)} ${histogram.count}\n`);
    histogram.reset();
    sliceStart = now;
  };
  setInterval(close, SLICE_MS).unref();
  process.on('exit', close);
}
