/**
 * Event-loop blocks, found and attributed while the agent runs (docs/event-loop-blocks.md): the
 * stall watch (stall-watch.ts) says when the loop did not turn; the time sampler's next stop
 * (a gather or a cut: the agent asks for one soon after a stall) hands over the tree holding the
 * stall's samples (stall-samples.ts), which say whose code held it and where
 * (block-attribution.ts); each block found goes to the listeners — the recording, and the spans
 * that are about to leave (block-spans.ts). Nothing here throws into the app: a failure is one
 * warning, and the watch stops.
 */
import type { SourceMapper } from '@datadog/pprof/out/src/sourcemapper/sourcemapper.js';
import type { TimeProfile, TimeProfileNodeContext } from '@datadog/pprof/out/src/v8-types.js';
import { type Logger, reason } from '../log.js';
import type { TreeTap } from '../profiling/time-source.js';
import { attributeStall, type StallMicros } from './block-attribution.js';
import { type Block, type BlockSpan, blockOf } from './block.js';
import { samplesWithin } from './stall-samples.js';
import { type Stall, StallWatch } from './stall-watch.js';

export interface BlockWatchOptions<O> {
  thresholdMs: number;
  /** The time sampler's interval. */
  intervalMicros: number;
  /** Whose a sample is, as the profiles say (the time fold's `spanOf`): undefined for no one's. */
  ownerOf: (context: TimeProfileNodeContext, atMicros: number) => O | undefined;
  /** The span an owner stands for. */
  spanOf: (owner: O) => BlockSpan;
  /** The app's source maps, once read (Profiler.sourceMaps). */
  sourceMapper: () => SourceMapper | undefined;
  /** The agent's dist folder, whose frames are not the app's. */
  agentDir: string | undefined;
  /** Asks for the sampler's tree soon: a stall waits for it to be attributed. */
  gatherSoon: () => void;
  log: Logger;
}

/** Stalls not attributed yet are at most this many: under a loop that stalls without end, the oldest go unattributed. */
const MAX_PENDING = 64;

export class BlockWatch<O> implements TreeTap {
  private readonly watch: StallWatch;
  private pending: StallMicros[] = [];
  private readonly blockListeners: ((block: Block) => void)[] = [];
  private readonly settledListeners: ((through: number) => void)[] = [];
  /** Stalls seen so far, and of them, the first ones settled (attributed, or found to be no block): every one up to `settled`. */
  private seen = 0;
  private settled = 0;
  private failed = false;
  /** A stop is about to take the sampler's tree: a stall found now needs no gather of its own. */
  private stopping = false;

  constructor(private readonly options: BlockWatchOptions<O>) {
    this.watch = new StallWatch(options.thresholdMs, (stall) => this.stalled(stall));
  }

  /** Each block, as it is attributed. */
  onBlock(listener: (block: Block) => void): void {
    this.blockListeners.push(listener);
  }

  /** After each attribution: every stall up to `through` (stallsBy's numbering) is settled. */
  onSettled(listener: (through: number) => void): void {
    this.settledListeners.push(listener);
  }

  start(): void {
    this.watch.start();
  }

  stop(): void {
    this.watch.stop();
  }

  /**
   * The number of the last stall that code ending now may have run in: one still under way (the
   * loop has not turned for the threshold: it will be the next one seen), else the last one seen,
   * if it is not settled; 0 when there is none to wait for.
   */
  stallsBy(nowMs = performance.now()): number {
    if (this.watch.heldNow(nowMs)) return this.seen + 1;
    return this.seen > this.settled ? this.seen : 0;
  }

  beforeStop(): void {
    if (this.failed) return;
    this.stopping = true;
    try {
      this.watch.turn();
    } catch (error) {
      this.fail(error);
    } finally {
      this.stopping = false;
    }
  }

  /** A stop's tree: every pending stall's samples are in it (the stall ended before the stop), so each is attributed now. */
  tree(raw: TimeProfile | undefined, epochOffsetMicros: number): void {
    if (this.pending.length === 0 || this.failed) return;
    const stalls = this.pending;
    this.pending = [];
    try {
      const walk =
        raw === undefined
          ? { samples: stalls.map(() => []), stacks: [] }
          : samplesWithin(
              raw,
              epochOffsetMicros,
              stalls.map((stall) => ({ fromMicros: stall.sinceMicros, toMicros: stall.untilMicros })),
              this.options.ownerOf,
            );
      const epochOffsetMs = Date.now() - performance.now();
      stalls.forEach((stall, i) => {
        const attribution = attributeStall(stall, walk.samples[i] ?? [], this.options);
        if (attribution === undefined) return;
        const block = blockOf(attribution, walk.stacks, {
          thresholdMs: this.options.thresholdMs,
          spanOf: this.options.spanOf,
          sourceMapper: this.options.sourceMapper(),
          agentDir: this.options.agentDir,
          epochOffsetMs,
        });
        for (const listener of this.blockListeners) listener(block);
      });
    } catch (error) {
      this.fail(error);
    }
    this.settle(this.seen);
  }

  /** Called from the watch's timer, or a stop's: what goes wrong is ours, never the app's. */
  private stalled(stall: Stall): void {
    this.seen += 1;
    if (this.pending.length >= MAX_PENDING) this.pending.shift();
    this.pending.push({ sinceMicros: stall.sinceMs * 1000, dueMicros: stall.dueMs * 1000, untilMicros: stall.untilMs * 1000 });
    if (this.stopping) return;
    try {
      this.options.gatherSoon();
    } catch (error) {
      this.fail(error);
    }
  }

  private settle(through: number): void {
    this.settled = through;
    for (const listener of this.settledListeners) {
      try {
        listener(through);
      } catch (error) {
        this.options.log.debug(`event-loop blocks: ${reason(error)}`);
      }
    }
  }

  /** One warning, and no more watching: what waits for a block is let go. */
  private fail(error: unknown): void {
    this.failed = true;
    this.watch.stop();
    this.pending = [];
    this.options.log.warn(`event-loop blocks are no longer watched: ${reason(error)}`);
    this.settle(Number.POSITIVE_INFINITY);
  }
}
