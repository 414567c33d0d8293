import type { TimeProfileNode } from '@datadog/pprof/out/src/v8-types.js';
import { nodeZlib } from '../builtins.js';
import type { ProfileType } from '../config.js';
import { encodeInSteps } from '../pprof-encode.js';
import type { ProfileWindow } from '../profiler.js';
import { nextTurn, runNow, runSliced } from '../slices.js';
import { buildWindowProfiles } from '../window-profile.js';

/** Fastest level (zlib's Z_BEST_SPEED), as Go's runtime/pprof writes its profiles: the threadpool shares the app's CPU. */
const GZIP = { level: 1 };
/** Longest stretch of the event loop a window's pprof build or encoding takes before letting the app run. */
const SLICE_MS = 2;
const gzipAsync = (data: Uint8Array) =>
  new Promise<Buffer>((resolve, reject) => nodeZlib().gzip(data, GZIP, (error, out) => (error ? reject(error) : resolve(out))));

/** One profile of a window as it goes on the wire or to disk: gzipped pprof. */
export interface EncodedProfile {
  type: ProfileType;
  body: Uint8Array;
}

type Done = (window: ProfileWindow, profiles: EncodedProfile[]) => void;


/**
 * Encodes windows off the hot path (async gzip) and remembers those still in progress, so the
 * exit path can encode them synchronously instead of losing them: after process 'exit' begins,
 * no async encode will ever complete. Empty profiles are skipped.
 */
export class WindowEncoder {
  private readonly pending = new Map<ProfileWindow, Promise<void>>();

  encode(window: ProfileWindow, done: Done, failed: (error: unknown) => void): void {
    const settled = encodeAsync(window).then(
      (profiles) => {
        if (this.pending.delete(window)) done(window, profiles);
      },
      (error: unknown) => {
        if (this.pending.delete(window)) failed(error);
      },
    );
    this.pending.set(window, settled);
  }

  /** Resolves once every window handed to `encode` so far is done (or failed). */
  async settle(): Promise<void> {
    await Promise.all(this.pending.values());
  }

  /** At exit: takes every window still encoding and encodes it synchronously; its async result is then ignored. */
  takePendingSync(): [ProfileWindow, EncodedProfile[]][] {
    const out: [ProfileWindow, EncodedProfile[]][] = [];
    for (const window of [...this.pending.keys()]) {
      this.pending.delete(window);
      out.push([window, encodeSync(window)]);
    }
    return out;
  }
}

/**
 * Readies the encoding ahead of the first window (RemoteDestination's warm-up, in the app's first
 * turns): zlib loaded, and the whole path run once on a one-sample window, so that the first real
 * window's code is not parsed and compiled in the middle of the app's traffic (measured: the
 * first flush paused the event loop about twice as long as the later ones).
 */
export function prepareEncoder(): void {
  nodeZlib();
  encodeAsync(WARM_UP).catch(() => {
    // The first real window reports what fails.
  });
}

const WARM_UP_NODE: TimeProfileNode = { name: 'warm-up', scriptName: '', hitCount: 1, children: [], contexts: [{ timestamp: 0n, cpuTime: 1 }] };
const WARM_UP: ProfileWindow = {
  from: 0,
  until: 1,
  raw: {
    startTime: 0,
    endTime: 1000,
    hasCpuTime: true,
    topDownRoot: { name: '(root)', scriptName: '', hitCount: 0, children: [WARM_UP_NODE] },
  },
  build: { intervalMicros: 1000, types: ['cpu', 'wall'], spanOf: () => undefined, traceIdLabel: false },
};

/**
 * Spread over turns of the event loop (the cut itself was one), so that a window costs the app
 * several short pauses instead of one long one: the pprof build, then each profile's encoding, in
 * slices of ~2 ms, and gzip in the threadpool.
 */
async function encodeAsync(window: ProfileWindow): Promise<EncodedProfile[]> {
  await nextTurn();
  const profiles = await runSliced(buildWindowProfiles(window.raw, window.from, window.build), SLICE_MS);
  const out: EncodedProfile[] = [];
  for (const [type, profile] of profiles) {
    if (profile.sample.length === 0) continue;
    await nextTurn();
    out.push({ type, body: await gzipAsync(await runSliced(encodeInSteps(profile), SLICE_MS)) });
  }
  return out;
}

/** The same at exit, where the loop no longer turns: the same steps, run through in one go. */
export function encodeSync(window: ProfileWindow): EncodedProfile[] {
  const out: EncodedProfile[] = [];
  for (const [type, profile] of runNow(buildWindowProfiles(window.raw, window.from, window.build))) {
    if (profile.sample.length === 0) continue;
    out.push({ type, body: nodeZlib().gzipSync(runNow(encodeInSteps(profile)), GZIP) });
  }
  return out;
}
