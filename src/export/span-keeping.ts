import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { percentileNs } from '../duration-histogram.js';
import type { EndpointTotal } from '../recording.js';
import { EndpointTotals, otlpKind } from './endpoint-totals.js';

/** SpanStatusCode.ERROR of @opentelemetry/api. */
const STATUS_ERROR = 2;

export interface KeepingLimits {
  /** Per endpoint and second, how many local traces are kept for each reason (error, slow, sample). */
  perSecond: number;
  /** Spans held while their local root has not ended; beyond, the oldest traces' are summarised. */
  maxPending: number;
  /** Traces whose decision is remembered for spans that end after their root. */
  maxDecided: number;
}

export const DEFAULT_KEEPING: KeepingLimits = { perSecond: 10, maxPending: 20_000, maxDecided: 10_000 };

/** A root slower than this percentile of its endpoint's durations counts as slow. */
const SLOW_PERCENTILE = 90;
/** Below this many roots an endpoint has no meaningful percentile yet: no root counts as slow. */
const SLOW_AFTER = 20;

interface Slot {
  second: number;
  errors: number;
  slow: number;
  sample: number;
  /** The endpoint's SLOW_PERCENTILE, read from its histogram once per second. */
  slowNs: number;
}

const hrNs = ([seconds, nanos]: readonly [number, number]): number => seconds * 1e9 + nanos;

function isLocalRoot(span: ReadableSpan): boolean {
  const parent = span.parentSpanContext;
  return parent === undefined || parent.isRemote === true;
}

/**
 * Local mode's rule for which spans are written in full (issue 14). Every local root (a span whose
 * parent is not in this process) is counted into EndpointTotals, so counts, errors and percentiles
 * never depend on what is kept. Details are kept per local trace — the root and the spans under it,
 * never a child without its root — per endpoint and second: up to `perSecond` with an error status,
 * up to `perSecond` among the slow (above the endpoint's 90th percentile so far), and the
 * first `perSecond` of the rest, a fair sample over time. Under light load that is everything.
 * Children end before their root: they wait, bounded, for their root's decision.
 */
export class SpanKeeper {
  readonly totals = new EndpointTotals();
  /** Spans the rule did not choose, their roots counted in `totals`. */
  summarized = 0;
  /** Spans of traces whose local root has not ended, by trace id, oldest trace first. */
  private readonly pending = new Map<string, ReadableSpan[]>();
  private pendingCount = 0;
  /** Recent decisions by trace id, oldest first, for spans that end after their root. */
  private readonly decided = new Map<string, boolean>();
  private readonly slots = new Map<EndpointTotal, Slot>();

  constructor(private readonly limits: KeepingLimits = DEFAULT_KEEPING) {}

  /** The spans of `batch` (and of earlier ones, held) to write now; `nowMs` is the clock. */
  take(batch: readonly ReadableSpan[], nowMs: number): ReadableSpan[] {
    const out: ReadableSpan[] = [];
    for (const span of batch) {
      const traceId = span.spanContext().traceId;
      if (!isLocalRoot(span)) {
        const decision = this.decided.get(traceId);
        if (decision === true) out.push(span);
        else if (decision === false) this.summarized++;
        else this.hold(traceId, span);
        continue;
      }
      const durationNs = hrNs(span.duration);
      const error = span.status.code === STATUS_ERROR;
      const total = this.totals.add(span.name, otlpKind(span.kind), durationNs, error);
      const trace = this.takeTrace(traceId, span.spanContext().spanId);
      const keep = this.choose(total, durationNs, error, nowMs);
      this.remember(traceId, keep);
      if (keep) out.push(...trace, span);
      else this.summarized += trace.length + 1;
    }
    return out;
  }

  /** Spans still waiting for a root that never ended (the process is exiting): written as they are. */
  drain(): ReadableSpan[] {
    const out = [...this.pending.values()].flat();
    this.pending.clear();
    this.pendingCount = 0;
    return out;
  }

  private hold(traceId: string, span: ReadableSpan): void {
    let spans = this.pending.get(traceId);
    if (spans === undefined) this.pending.set(traceId, (spans = []));
    spans.push(span);
    this.pendingCount++;
    while (this.pendingCount > this.limits.maxPending) {
      const [oldest, dropped] = this.pending.entries().next().value as [string, ReadableSpan[]];
      this.pending.delete(oldest);
      this.pendingCount -= dropped.length;
      this.summarized += dropped.length;
    }
  }

  /** The held spans under the root `rootSpanId` (its descendants); the trace's others stay held. */
  private takeTrace(traceId: string, rootSpanId: string): ReadableSpan[] {
    const held = this.pending.get(traceId);
    if (held === undefined) return [];
    const under = new Set([rootSpanId]);
    const taken: ReadableSpan[] = [];
    let rest = held;
    for (let grew = true; grew && rest.length > 0; ) {
      grew = false;
      const next: ReadableSpan[] = [];
      for (const span of rest) {
        const parentId = span.parentSpanContext?.spanId;
        if (parentId !== undefined && under.has(parentId)) {
          under.add(span.spanContext().spanId);
          taken.push(span);
          grew = true;
        } else next.push(span);
      }
      rest = next;
    }
    if (rest.length === 0) this.pending.delete(traceId);
    else this.pending.set(traceId, rest);
    this.pendingCount -= taken.length;
    return taken;
  }

  private choose(total: EndpointTotal, durationNs: number, error: boolean, nowMs: number): boolean {
    const second = Math.floor(nowMs / 1000);
    let slot = this.slots.get(total);
    if (slot === undefined || slot.second !== second) {
      const slowNs = total.count > SLOW_AFTER ? percentileNs(total.histogram, SLOW_PERCENTILE, total.maxNs) : Number.POSITIVE_INFINITY;
      this.slots.set(total, (slot = { second, errors: 0, slow: 0, sample: 0, slowNs }));
    }
    const limit = this.limits.perSecond;
    if (error && slot.errors < limit) {
      slot.errors++;
      return true;
    }
    if (durationNs > slot.slowNs && slot.slow < limit) {
      slot.slow++;
      return true;
    }
    if (slot.sample < limit) {
      slot.sample++;
      return true;
    }
    return false;
  }

  private remember(traceId: string, keep: boolean): void {
    this.decided.delete(traceId);
    this.decided.set(traceId, keep);
    if (this.decided.size > this.limits.maxDecided) this.decided.delete(this.decided.keys().next().value as string);
  }
}
