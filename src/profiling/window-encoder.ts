import type { TimeProfileNode } from '@datadog/pprof/out/src/v8-types.js';
import { nodeZlib } from '../util/builtins.js';
import { gzip, gzipSync } from '../util/gzip.js';
import type { ProfileType } from '../config/index.js';
import { encodeInSteps } from './pprof-encode.js';
import type { ProfileWindow } from './profiler.js';
import type { Logger } from '../log.js';
import { InProgress } from '../util/in-progress.js';
import { nextTurn, runNow, runSliced, SLICE_MS, type SliceStats } from '../util/slices.js';
import { buildWindow, type Profile } from './profile-window.js';
import { timePart } from './time-profile.js';
import { LABEL_SPAN_ID, LABEL_SPAN_NAME } from '../wire.js';

/** One body of a window as it goes on the wire or to disk, named: for pprof, one per profile type. */
export interface EncodedProfile<K extends string = ProfileType> {
  type: K;
  body: Uint8Array;
}

/**
 * How a window's built profiles become bytes: each destination encodes its own wire format
 * (pprof for Pyroscope's /ingest and local recordings, OTLP for an OTLP profiles endpoint).
 */
export interface WireFormat<K extends string> {
  /** The bodies, in steps (slices.ts); empty profiles make none. */
  encode(profiles: ReadonlyMap<ProfileType, Profile>, window: ProfileWindow): Generator<void, EncodedProfile<K>[]>;
  /** Whether each body is gzipped (in the threadpool; synchronously at exit). */
  gzip: boolean;
}

/** One gzipped pprof per profile type, byte for byte what `Profile.encode()` writes. */
export const PPROF: WireFormat<ProfileType> = {
  *encode(profiles) {
    const out: EncodedProfile[] = [];
    for (const [type, profile] of profiles) if (profile.sample.length > 0) out.push({ type, body: yield* encodeInSteps(profile) });
    return out;
  },
  gzip: true,
};

/**
 * Each window's WindowCost is published here once it is encoded, for tools in the app's process
 * that watch what the agent holds the event loop for (docs/performance.md, "Flush pauses and
 * event-loop stalls"): subscribe with `diagnostics_channel.subscribe('pyro-run:profile-window', …)`.
 */
export const WINDOW_COST_CHANNEL = 'pyro-run:profile-window';
const windowCosts = process.getBuiltinModule('node:diagnostics_channel').channel(WINDOW_COST_CHANNEL);

type Done<K extends string> = (window: ProfileWindow, profiles: EncodedProfile<K>[]) => void;

/**
 * Encodes windows off the hot path (async gzip) and remembers those still in progress, so the
 * exit path can encode them synchronously instead of losing them: after process 'exit' begins,
 * no async encode will ever complete. Empty profiles are skipped.
 */
export class WindowEncoder<K extends string = ProfileType> {
  private readonly inProgress = new InProgress<ProfileWindow>();

  constructor(
    private readonly log: Logger,
    private readonly format: WireFormat<K>,
  ) {}

  encode(window: ProfileWindow, done: Done<K>, failed: (error: unknown) => void): void {
    const stats: SliceStats = { slices: 0, longestMs: 0 };
    this.inProgress.add(
      window,
      encodeAsync(window, this.format, stats),
      (profiles) => {
        // What the window cost the app's event loop, for whoever wonders about pauses.
        const kb = profiles.reduce((sum, p) => sum + p.body.length, 0) / 1024;
        const cost: WindowCost = { longestStopMs: window.longestStopMs, stops: window.stops, slices: stats.slices, longestSliceMs: stats.longestMs, kb };
        this.log.debug(windowCostLine(cost));
        if (windowCosts.hasSubscribers) windowCosts.publish(cost);
        done(window, profiles);
      },
      failed,
    );
  }

  /** Resolves once every window handed to `encode` so far is done (or failed). */
  settle(): Promise<void> {
    return this.inProgress.settle();
  }

  /** At exit: takes every window still encoding and encodes it synchronously; its async result is then ignored. */
  takePendingSync(): [ProfileWindow, EncodedProfile<K>[]][] {
    return this.inProgress.take().map((window) => [window, encodeSync(window, this.format)]);
  }
}

/** What one window cost the app's event loop, and its size on the wire. */
export interface WindowCost {
  /** The longest of the window's stops: its samplers' stop and restart at a gather or at the cut. */
  longestStopMs: number;
  /** How many stops: the window's gathers and its cut. */
  stops: number;
  /** Slices the pprof build and encoding ran in, each a turn of the event loop. */
  slices: number;
  longestSliceMs: number;
  /** Both profiles, gzipped. */
  kb: number;
}

/** The debug line logged per window encoded. */
export function windowCostLine(cost: WindowCost): string {
  return `profile window: ${cost.stops} stops of at most ${cost.longestStopMs.toFixed(1)} ms, then ${cost.slices} slices of at most ${cost.longestSliceMs.toFixed(1)} ms; ${cost.kb.toFixed(1)} KB gzipped`;
}

/**
 * Readies the encoding ahead of the first window (the uploads' warm-up, uploads.ts, run at the
 * app's first listen()): zlib loaded, and the whole path run once on a window of two samples, one of them in a
 * span, so that the first real window's code is not parsed and compiled in the middle of the
 * app's traffic (measured: the first flush paused the event loop about twice as long as the later
 * ones).
 */
export function prepareEncoder<K extends string>(format: WireFormat<K>): void {
  nodeZlib();
  encodeAsync(WARM_UP, format).catch(() => {
    // The first real window reports what fails.
  });
}

/** One of the warm-up's samples is labelled, so it takes the labelled path of every real window. */
const WARM_UP_LABELS = { toLabels: () => ({ [LABEL_SPAN_ID]: '0000000000000001', [LABEL_SPAN_NAME]: 'warm-up' }) };
const WARM_UP_NODE: TimeProfileNode = {
  name: 'warm-up',
  scriptName: '',
  hitCount: 2,
  children: [],
  contexts: [
    { timestamp: 0n, cpuTime: 1 },
    { timestamp: 0n, cpuTime: 1, context: WARM_UP_LABELS },
  ],
};
const WARM_UP: ProfileWindow = {
  from: 0,
  until: 1,
  longestStopMs: 0,
  stops: 1,
  parts: [
    timePart([{ startTime: 0, endTime: 1000, hasCpuTime: true, topDownRoot: { name: '(root)', scriptName: '', hitCount: 0, children: [WARM_UP_NODE] } }], {
      intervalMicros: 1000,
      types: ['cpu', 'wall'],
      spanOf: ({ context }) => (context === WARM_UP_LABELS ? WARM_UP_LABELS : undefined),
      traceIdLabel: false,
    }),
  ],
};

/**
 * Spread over turns of the event loop (the cut itself was one), so that a window costs the app
 * several short pauses instead of one long one: the pprof build, then the encoding, in slices of
 * ~2 ms, and gzip in the threadpool.
 */
async function encodeAsync<K extends string>(window: ProfileWindow, format: WireFormat<K>, stats?: SliceStats): Promise<EncodedProfile<K>[]> {
  await nextTurn();
  const profiles = await runSliced(buildWindow(window), SLICE_MS, stats);
  await nextTurn();
  const encoded = await runSliced(format.encode(profiles, window), SLICE_MS, stats);
  if (!format.gzip) return encoded;
  return Promise.all(encoded.map(async ({ type, body }) => ({ type, body: await gzip(body) })));
}

/** The same at exit, where the loop no longer turns: the same steps, run through in one go. */
export function encodeSync<K extends string>(window: ProfileWindow, format: WireFormat<K>): EncodedProfile<K>[] {
  const encoded = runNow(format.encode(runNow(buildWindow(window)), window));
  return format.gzip ? encoded.map(({ type, body }) => ({ type, body: gzipSync(body) })) : encoded;
}
