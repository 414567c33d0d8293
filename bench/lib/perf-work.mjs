// What a process's main thread spends its time on, from Linux `perf` samples: each sample is put in
// the first kind of V8 work found on its call stack (V8's C++ frames carry their names in the node
// binary), else under whose JavaScript its leaf-most JavaScript frame is (`--perf-basic-prof` names
// those frames `JS:<tier><name> <script>:<line>:<column>`).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Samples a second; prime, so the samples do not beat with the 10 ms sampler or the 1 ms probe. */
const FREQUENCY = 4999;

/** V8's work by the C++ frames that do it, in the order a sample is tested against them. */
export const V8_WORK = [
  ["V8's profiler logging code objects", /ProfilerListener::|CodeEntry::|WeakCodeRegistry::/],
  ["the perf map's logging (the bench's own)", /CodeEventLogger::/],
  ["@datadog/pprof's stops", /dd::WallProfiler::/],
  ['lazy compiles (first calls)', /Runtime_CompileLazy/],
  [
    "optimizing compiles' main-thread part",
    /Runtime_StartMaglevOptimizeJob|Runtime_CompileOptimized|GetOrCompileOptimized|InstallOptimizedFunctions|FinalizeFinishedJobs|FinalizeMaglevCompilationJob|FinalizeTurbofanCompilationJob/,
  ],
  ['deoptimizations', /Deoptimiz/],
  ['collections', /Heap::CollectGarbage|Scavenge|MinorGCJob|MarkCompact|IncrementalMarking|Heap::Perform/],
];
const OTHER_NATIVE = 'other native work';

/** Whether Linux `perf` is installed (sampling another process also needs the right to: root, or a low `perf_event_paranoid`). */
export function canPerf() {
  return spawnSync('perf', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * Starts sampling `pid` with call stacks for `seconds`; the samples' times are CLOCK_MONOTONIC, the
 * clock of `process.hrtime`. `done` resolves with the recording's path once perf has written it.
 */
export function recordPerf(pid, seconds) {
  const file = path.join(os.tmpdir(), `perf-work-${process.pid}-${pid}.data`);
  const perf = spawn('perf', ['record', '-q', '-k', 'mono', '-F', String(FREQUENCY), '-g', '-p', String(pid), '-o', file, '--', 'sleep', String(seconds)], {
    stdio: 'ignore',
  });
  const done = new Promise((resolve, reject) => {
    perf.on('error', reject);
    perf.on('exit', (code) => (code === 0 ? resolve(file) : reject(new Error(`perf record exited with ${code}`))));
  });
  return { done };
}

/**
 * Milliseconds of `pid`'s main thread per kind of work in each of `windows` (`{ from, to }` in ms
 * after `zeroNs`, a `process.hrtime.bigint()` reading), from a recording of `recordPerf`.
 * `originOf(script)` names whose JavaScript a script is. The recording is deleted.
 */
export function mainThreadWork(file, pid, zeroNs, windows, originOf) {
  let text;
  try {
    text = execFileSync('perf', ['script', '-i', file, '-F', 'tid,time,ip,sym,dso'], {
      encoding: 'utf8',
      maxBuffer: 1 << 30,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } finally {
    rmSync(file, { force: true });
  }
  const perWindow = windows.map(() => ({}));
  const count = (sample) => {
    if (sample?.tid !== String(pid)) return;
    const atMs = (sample.seconds * 1e9 - Number(zeroNs)) / 1e6;
    const i = windows.findIndex(({ from, to }) => atMs >= from && atMs < to);
    if (i < 0) return;
    const kind = kindOf(sample.frames, originOf);
    perWindow[i][kind] = (perWindow[i][kind] ?? 0) + 1000 / FREQUENCY;
  };
  let sample;
  for (const line of text.split('\n')) {
    // A sample's header `<tid> <seconds>:`, then one indented `<address> <symbol> (<object>)` per frame, leaf first.
    const header = line.match(/^\s*(\d+)\s+([\d.]+):/);
    if (header && !line.startsWith('\t')) {
      count(sample);
      sample = { tid: header[1], seconds: Number(header[2]), frames: [] };
      continue;
    }
    const frame = line.match(/^\s+[0-9a-f]+\s+(.*?)\s+\(.*\)$/);
    if (frame && sample) sample.frames.push(frame[1]);
  }
  count(sample);
  return perWindow;
}

function kindOf(frames, originOf) {
  const v8 = V8_WORK.find(([, pattern]) => frames.some((frame) => pattern.test(frame)));
  if (v8) return v8[0];
  const js = frames.find((frame) => frame.startsWith('JS:'));
  if (!js) return OTHER_NATIVE;
  const script = js
    .slice(js.lastIndexOf(' ') + 1)
    .replace(/:\d+:\d+$/, '')
    .replace(/^file:\/\//, '');
  return `JavaScript: ${originOf(script)}`;
}
