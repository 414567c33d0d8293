// Bench-only preload: pyro-run's cost per profile window (what it held the event loop for, and the
// window's size), as the agent publishes it on its diagnostics channel, written to the file named
// by BENCH_WINDOW_COST_FILE, one JSON object per line, as each window is encoded.
import { subscribe } from 'node:diagnostics_channel';
import { openSync, writeSync } from 'node:fs';

/** src/profiling/window-encoder.ts WINDOW_COST_CHANNEL. */
const CHANNEL = 'pyro-run:profile-window';
const file = process.env.BENCH_WINDOW_COST_FILE;

if (file) {
  const fd = openSync(file, 'w');
  subscribe(CHANNEL, (cost) => writeSync(fd, `${JSON.stringify(cost)}\n`));
}
