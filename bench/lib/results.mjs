// One JSON file per benchmark run, next to the others of its kind, never overwritten.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const RESULTS_DIR = path.join(import.meta.dirname, '..', 'results');

/** Writes bench/results/<benchmark>-<timestamp>.json and returns its path. */
export function writeResult(benchmark, data) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const file = path.join(RESULTS_DIR, `${benchmark}-${stamp}.json`);
  const machine = {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memBytes: os.totalmem(),
    platform: `${os.platform()} ${os.release()}`,
    loadAverage: os.loadavg(),
  };
  writeFileSync(file, `${JSON.stringify({ benchmark, at: new Date().toISOString(), machine, git: gitState(), ...data }, null, 2)}\n`);
  return file;
}

/** The commit measured, and whether src/ or dist/ differed from it (others may be editing). */
function gitState() {
  const git = (args) => execFileSync('git', args, { cwd: path.join(import.meta.dirname, '..', '..'), encoding: 'utf8' }).trim();
  try {
    return { commit: git(['rev-parse', 'HEAD']), srcChanged: git(['status', '--short', '--', 'src', 'register.ts']) !== '' };
  } catch {
    return undefined;
  }
}
