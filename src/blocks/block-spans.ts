/**
 * The spans' side of blocks: a span that may be charged with a block not attributed yet waits
 * before it leaves, and leaves with the block's event (block-events.ts). Blocks are attributed when
 * the sampler's tree holding them is taken, up to a few hundred milliseconds after the block (the
 * agent gathers soon after a stall: agent.ts `gatherSoon`), and the span that blocked has often
 * ended by then — a request that blocks and answers ends in the same turn. So a span that labels
 * its own samples (a local root, with the default scope) and ends while the loop is held, or while
 * a stall waits for its attribution, is held until that stall is settled: at most MAX_HOLD_MS.
 * Every other span leaves at once, as do all spans while nothing stalls.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { type Logger, reason } from '../log.js';
import type { SpanGate } from '../tracing/span-batcher.js';
import type { Block } from './block.js';
import { BlockEvents } from './block-events.js';
import { SpanHold } from './span-hold.js';

/** What the spans' side hears of the watch (BlockWatch). */
export interface BlockFeed {
  /** The stall a span ending now waits for; 0 for none. */
  stallsBy(): number;
  onBlock(listener: (block: Block) => void): void;
  onSettled(listener: (through: number) => void): void;
}

/** The longest a span waits for a block's attribution: a span that leaves a second or two late is still on time (OTEL_BSP_SCHEDULE_DELAY is 5 s). */
export const MAX_HOLD_MS = 2000;
/** Most spans held at once; past it the oldest leave (without the event, if their block comes later). */
export const MAX_HELD = 2048;

export class BlockSpans implements SpanGate {
  readonly events = new BlockEvents();
  private readonly hold: SpanHold<ReadableSpan>;

  constructor(
    private readonly watch: BlockFeed,
    /** Whether a span's samples are labelled with its own ID: only such a span is charged with a block. */
    private readonly labelsOwnSamples: (span: ReadableSpan) => boolean,
    private readonly log: Logger,
  ) {
    this.hold = new SpanHold(MAX_HOLD_MS, MAX_HELD, (error) => log.debug(`a span held for a block's attribution: ${reason(error)}`));
    // Events first: the spans let go next leave with them.
    watch.onBlock((block) => this.events.add(block));
    watch.onSettled((through) => this.hold.settled(through));
  }

  /** Called inside the app's `span.end()`: what goes wrong lets the span leave as it would have. */
  keep(span: ReadableSpan, pass: (span: ReadableSpan) => void): boolean {
    try {
      const waitsFor = this.watch.stallsBy();
      if (waitsFor === 0 || !this.labelsOwnSamples(span)) return false;
      this.hold.hold(span, pass, waitsFor);
      return true;
    } catch (error) {
      this.log.debug(`a span could not wait for a block's attribution: ${reason(error)}`);
      return false;
    }
  }

  drain(): void {
    this.hold.drain();
  }

  /** Each span as it leaves: with the events of the blocks charged to it. */
  get outgoing(): (span: ReadableSpan) => ReadableSpan {
    return this.events.outgoing;
  }
}
