// Runs bench/sink.mjs in its own process (on the load core) and keeps what it reports: one event
// per request received, with its arrival time, path and body size.
import path from 'node:path';
import { NODE, BENCH, cleanEnv } from './contenders.mjs';
import { start } from './proc.mjs';
import { LOAD_CORE } from './cores.mjs';

export async function startSink() {
  const handle = start(NODE[24], [path.join(BENCH, 'sink.mjs')], { env: cleanEnv(), core: LOAD_CORE, name: 'sink' });
  const events = [];
  handle.onLine = (text) => {
    const m = text.match(/^req (\d+) (\S+) (\S+) (\d+)$/);
    if (m) events.push({ at: Number(m[1]), method: m[2], path: m[3], bytes: Number(m[4]) });
  };
  const { match } = await handle.line(/^listening (\d+)$/, 10_000);
  return {
    url: `http://127.0.0.1:${match[1]}`,
    events,
    /** Requests and bytes per path that arrived at or after `fromMs` (epoch ms). */
    tally(fromMs = 0, toMs = Infinity) {
      const out = {};
      for (const e of events) {
        if (e.at < fromMs || e.at > toMs) continue;
        out[e.path] ??= { requests: 0, bytes: 0 };
        out[e.path].requests++;
        out[e.path].bytes += e.bytes;
      }
      return out;
    },
    stop: () => handle.stop('SIGTERM', 5_000),
  };
}
