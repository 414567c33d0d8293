import { nodeZlib } from '../builtins.js';
import type { ProfileType } from '../config.js';
import { splitTimeProfile } from '../pprof-split.js';
import type { ProfileWindow } from '../profiler.js';

/** Fastest level (zlib's Z_BEST_SPEED), as Go's runtime/pprof writes its profiles: the threadpool shares the app's CPU. */
const GZIP = { level: 1 };
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
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
 * Each step in its own turn of the event loop (the cut itself was one), so that a window costs
 * the app several short pauses instead of one long one: split, then per profile the pprof
 * encoding (which yields between its sections) and gzip in the threadpool.
 */
/** Loads zlib ahead of the first window (RemoteDestination's warm-up). */
export function prepareEncoder(): void {
  nodeZlib();
}

async function encodeAsync(window: ProfileWindow): Promise<EncodedProfile[]> {
  await nextTurn();
  const out: EncodedProfile[] = [];
  for (const [type, profile] of splitTimeProfile(window.profile, window.types)) {
    if (profile.sample.length === 0) continue;
    await nextTurn();
    out.push({ type, body: await gzipAsync(await profile.encodeAsync()) });
  }
  return out;
}

export function encodeSync(window: ProfileWindow): EncodedProfile[] {
  const out: EncodedProfile[] = [];
  for (const [type, profile] of splitTimeProfile(window.profile, window.types)) {
    if (profile.sample.length === 0) continue;
    out.push({ type, body: nodeZlib().gzipSync(profile.encode(), GZIP) });
  }
  return out;
}
