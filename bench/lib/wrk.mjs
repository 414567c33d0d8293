// wrk as the load generator: C, one thread, fixed connections, on the load core — it keeps the
// app's core saturated without competing for it, which a Node load generator could not do as
// cheaply. Debian packages it as `wrk`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LOAD_CORE } from './cores.mjs';
import { run } from './proc.mjs';

/** Path of wrk, or undefined when it is not installed. */
export function findWrk() {
  const found = spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' });
  return found.status === 0 && found.stdout.trim() !== '' ? found.stdout.trim() : undefined;
}

const UNIT_MS = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function durationMs(text) {
  const m = text.match(/^([\d.]+)(us|ms|s|m)$/);
  return m ? Number(m[1]) * UNIT_MS[m[2]] : Number.NaN;
}

/** Reads requests/s, latency percentiles, and failed responses out of `wrk --latency` output. */
export function parseWrk(text) {
  const percent = (p) => durationMs(text.match(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm'))?.[1] ?? '');
  const socket = text.match(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/);
  return {
    rps: Number(text.match(/^Requests\/sec:\s+([\d.]+)/m)?.[1] ?? Number.NaN),
    requests: Number(text.match(/^\s+(\d+) requests in/m)?.[1] ?? Number.NaN),
    p50: percent(50),
    p75: percent(75),
    p90: percent(90),
    p99: percent(99),
    non2xx: Number(text.match(/Non-2xx or 3xx responses: (\d+)/)?.[1] ?? 0),
    socketErrors: socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
  };
}

/**
 * One wrk run against `url`; throws when wrk fails or reports nothing. With `pauseMs`, each
 * connection waits that long after an answer before its next request (wrk's `delay()` hook), so
 * the app is loaded below saturation and its event loop is idle between requests.
 */
export async function wrk(bin, url, { connections = 16, seconds = 10, pauseMs } = {}) {
  const pacing = pauseMs === undefined ? [] : ['-s', pacingScript(pauseMs)];
  const out = await run(bin, ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', ...pacing, url], {
    core: LOAD_CORE,
    name: 'wrk',
    timeoutMs: (seconds + 30) * 1000,
  });
  const parsed = parseWrk(out.stdout);
  if (out.code !== 0 || !Number.isFinite(parsed.rps))
    throw new Error(`wrk failed (${JSON.stringify({ code: out.code, signal: out.signal })}): ${out.stdout}${out.stderr}`);
  return parsed;
}

let scriptDir;
/** A wrk Lua script whose `delay()` makes each connection pause `ms` between requests (one file per value, removed at exit). */
function pacingScript(ms) {
  if (scriptDir === undefined) {
    scriptDir = mkdtempSync(path.join(os.tmpdir(), 'wrk-pace-'));
    process.once('exit', () => rmSync(scriptDir, { recursive: true, force: true }));
  }
  const file = path.join(scriptDir, `pace-${Math.round(ms)}.lua`);
  writeFileSync(file, `function delay()\n  return ${Math.round(ms)}\nend\n`);
  return file;
}
