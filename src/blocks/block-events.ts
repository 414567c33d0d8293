/**
 * The span event a block leaves on the span whose code held the loop (wire.ts EVENT_LOOP_BLOCKED):
 * the blocks are remembered by span ID until that span leaves, and its outgoing view (the span
 * batcher's, as db-statements.ts's) carries one event per block. The app's span is not touched.
 */
import type { Attributes, HrTime } from '@opentelemetry/api';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace';
import {
  ATTR_BLOCK_DURATION_MS,
  ATTR_BLOCK_RAN_MS,
  ATTR_BLOCK_SAMPLES,
  ATTR_BLOCK_SPAN_SAMPLES,
  ATTR_BLOCK_STACK,
  ATTR_BLOCK_THRESHOLD_MS,
  ATTR_CODE_FILEPATH,
  ATTR_CODE_FUNCTION,
  ATTR_CODE_LINENO,
  EVENT_LOOP_BLOCKED,
} from '../wire.js';
import { spanWith } from '../tracing/span-view.js';
import type { Block } from './block.js';

/** Frames of the heaviest stack the event names, leaf first: enough to read what held the loop, not a page. */
const STACK_FRAMES = 20;

/** Spans whose blocks are remembered until they leave: the oldest are forgotten first (a span that never ends, or was not sampled). */
const MAX_SPANS = 1024;

const hrTime = (epochMs: number): HrTime => {
  const seconds = Math.floor(epochMs / 1000);
  return [seconds, Math.round((epochMs - seconds * 1000) * 1e6)];
};
const hrMs = ([seconds, nanos]: HrTime): number => seconds * 1000 + nanos / 1e6;

/**
 * The event of `block` on a span that started at `spanStart`: at the block's start, or the span's
 * if the block reads as starting before it (a block's start is known to within the watch's
 * period; an event before its span would be drawn outside it).
 */
export function blockEvent(block: Block, spanStart: HrTime): TimedEvent {
  const attributes: Attributes = {
    [ATTR_BLOCK_DURATION_MS]: Math.round(block.durationMs),
    [ATTR_BLOCK_RAN_MS]: Math.round(block.ranMs),
    [ATTR_BLOCK_THRESHOLD_MS]: block.thresholdMs,
    [ATTR_BLOCK_SAMPLES]: block.samples,
    [ATTR_BLOCK_SPAN_SAMPLES]: block.spanSamples,
  };
  if (block.where !== undefined) {
    attributes[ATTR_CODE_FUNCTION] = block.where.name;
    if (block.where.file !== '') attributes[ATTR_CODE_FILEPATH] = block.where.file;
    if (block.where.line > 0) attributes[ATTR_CODE_LINENO] = block.where.line;
  }
  const heaviest = block.stacks[block.heaviest];
  if (heaviest !== undefined) {
    attributes[ATTR_BLOCK_STACK] = heaviest.frames
      .slice(-STACK_FRAMES)
      .reverse()
      .map((id) => {
        const frame = block.frames[id]!;
        return frame.file === '' ? frame.name : `${frame.name} (${frame.file}:${frame.line})`;
      })
      .join('\n');
  }
  const time = hrMs(spanStart) > block.startedAt ? spanStart : hrTime(block.startedAt);
  return { name: EVENT_LOOP_BLOCKED, time, attributes, droppedAttributesCount: 0 };
}

/** Blocks by the span they are charged to, until it leaves. */
export class BlockEvents {
  private readonly bySpan = new Map<string, Block[]>();

  add(block: Block): void {
    if (block.span === undefined) return;
    const blocks = this.bySpan.get(block.span.spanId);
    if (blocks !== undefined) {
      blocks.push(block);
      return;
    }
    this.bySpan.set(block.span.spanId, [block]);
    if (this.bySpan.size > MAX_SPANS) this.bySpan.delete(this.bySpan.keys().next().value!);
  }

  /** Whether a block is known for the span with this ID. */
  has(spanId: string): boolean {
    return this.bySpan.has(spanId);
  }

  /** The span as it leaves: with one event per block charged to it (forgotten then), else as it is. */
  readonly outgoing = (span: ReadableSpan): ReadableSpan => {
    if (this.bySpan.size === 0) return span;
    const spanId = span.spanContext().spanId;
    const blocks = this.bySpan.get(spanId);
    if (blocks === undefined) return span;
    this.bySpan.delete(spanId);
    const events = [...span.events, ...blocks.map((block) => blockEvent(block, span.startTime))];
    return spanWith(span, { events });
  };
}
