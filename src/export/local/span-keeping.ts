import type { Attributes, HrTime, SpanContext, SpanKind, SpanStatus } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { percentileNs } from '../../util/duration-histogram.js';
import { ATTR_HTTP_METHOD, ATTR_HTTP_ROUTE, ATTR_HTTP_STATUS_CODE, ATTR_PROFILE_ID, ATTR_URL_PATH } from '../../wire.js';
import type { EndpointTotal } from '../../recording.js';
import { EndpointTotals, otlpKind } from './endpoint-totals.js';

/** SpanStatusCode.ERROR of @opentelemetry/api. */
const STATUS_ERROR = 2;

export interface KeepingLimits {
  /** Per endpoint and second, how many local traces are kept for each reason (error, slow, sample), sustained. */
  perSecond: number;
  /** How many may be kept at once for each reason after a quiet spell: a burst is kept whole. */
  burst: number;
  /** Spans held while their local root has not ended; beyond, the oldest traces' are summarised. */
  maxPending: number;
  /** Traces whose decision is remembered for spans that end after their root. */
  maxDecided: number;
  /**
   * Summarised roots remembered until the profile window that covers them says whether they carry
   * samples (`sampled`); the oldest go first. ~300 bytes each.
   */
  maxLookBack: number;
}

export const DEFAULT_KEEPING: KeepingLimits = { perSecond: 10, burst: 100, maxPending: 20_000, maxDecided: 10_000, maxLookBack: 20_000 };

/** What a summarised root keeps of its attributes: what the report reads. */
const LOOK_BACK_ATTRIBUTES = [ATTR_PROFILE_ID, ATTR_HTTP_ROUTE, ATTR_HTTP_METHOD, ATTR_URL_PATH, ATTR_HTTP_STATUS_CODE];

/**
 * A summarised local root, as little of it as a recording's report needs (no events, no links, the
 * attributes it reads), sharing the span's context, times, resource and scope: written later if a
 * profile window shows samples in it.
 */
class SummarizedRoot implements ReadableSpan {
  readonly name: string;
  readonly kind: SpanKind;
  readonly parentSpanContext: SpanContext | undefined;
  readonly startTime: HrTime;
  readonly endTime: HrTime;
  readonly duration: HrTime;
  readonly status: SpanStatus;
  readonly attributes: Attributes = {};
  readonly links = [];
  readonly events = [];
  readonly ended = true;
  readonly resource: ReadableSpan['resource'];
  readonly instrumentationScope: ReadableSpan['instrumentationScope'];
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  private readonly context: SpanContext;
  /** Epoch milliseconds. */
  readonly endMs: number;

  constructor(span: ReadableSpan) {
    this.context = span.spanContext();
    ({
      name: this.name,
      kind: this.kind,
      parentSpanContext: this.parentSpanContext,
      startTime: this.startTime,
      endTime: this.endTime,
      duration: this.duration,
      status: this.status,
    } = span);
    ({ resource: this.resource, instrumentationScope: this.instrumentationScope } = span);
    for (const key of LOOK_BACK_ATTRIBUTES) {
      const value = span.attributes[key];
      if (value !== undefined) this.attributes[key] = value;
    }
    this.endMs = span.endTime[0] * 1000 + span.endTime[1] / 1e6;
  }

  spanContext(): SpanContext {
    return this.context;
  }
}

/** A root slower than this percentile of its endpoint's durations counts as slow. */
const SLOW_PERCENTILE = 90;
/** Below this many roots an endpoint has no meaningful percentile yet: no root counts as slow. */
const SLOW_AFTER = 20;

/** An endpoint's allowance: a token bucket per reason, refilled at `perSecond` up to `burst`. */
interface Allowance {
  atMs: number;
  errors: number;
  slow: number;
  sample: number;
  /** The endpoint's SLOW_PERCENTILE, read from its histogram at most once a second. */
  slowNs: number;
  slowAtMs: number;
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
 * never a child without its root — per endpoint, from three allowances refilled at `perSecond` up
 * to `burst`: those with an error status, the slow (above the endpoint's 90th percentile so far),
 * and the rest as they come, a fair sample over time. Under light load, and for bursts up to
 * `burst`, that is everything.
 * Children end before their root: they wait, bounded, for their root's decision. A summarised
 * root is remembered (bounded) until a profile window that covers its end is written: if samples of
 * the recent windows carry its span ID, it is written after all, alone (`sampled`).
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
  private readonly allowances = new Map<EndpointTotal, Allowance>();
  /** Summarised roots, oldest first, from `lookBackHead` on (before it: forgotten, cleared). */
  private lookBack: (SummarizedRoot | undefined)[] = [];
  private lookBackHead = 0;
  private readonly limits: KeepingLimits;

  constructor(limits: Partial<KeepingLimits> = {}) {
    this.limits = { ...DEFAULT_KEEPING, ...limits };
  }

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
      else {
        this.summarized += trace.length + 1;
        this.lookBackAt(span);
      }
    }
    return out;
  }

  /** A span dropped before the keeping rule saw it: a local root is counted in `totals`, and the spans of its trace are not kept. */
  dropped(span: ReadableSpan): void {
    if (!isLocalRoot(span)) return;
    this.totals.add(span.name, otlpKind(span.kind), hrNs(span.duration), span.status.code === STATUS_ERROR);
    const traceId = span.spanContext().traceId;
    this.summarized += this.takeTrace(traceId, span.spanContext().spanId).length;
    this.remember(traceId, false);
  }

  /**
   * The summarised roots that ended by `untilMs` (a profile window's end) and that `sampled` says
   * samples were labelled with (the recent windows' span IDs): written after all. The others that
   * ended by then are forgotten.
   */
  sampled(isSampled: (spanId: string) => boolean, untilMs: number): ReadableSpan[] {
    const out: ReadableSpan[] = [];
    const later: SummarizedRoot[] = [];
    for (let i = this.lookBackHead; i < this.lookBack.length; i++) {
      const root = this.lookBack[i];
      if (root === undefined) continue;
      if (root.endMs > untilMs) later.push(root);
      else if (isSampled(root.spanContext().spanId)) out.push(root);
    }
    this.lookBack = later;
    this.lookBackHead = 0;
    this.summarized -= out.length;
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
    const { perSecond, burst } = this.limits;
    let allowance = this.allowances.get(total);
    if (allowance === undefined) {
      allowance = { atMs: nowMs, errors: burst, slow: burst, sample: burst, slowNs: Number.POSITIVE_INFINITY, slowAtMs: Number.NEGATIVE_INFINITY };
      this.allowances.set(total, allowance);
    }
    const refill = (Math.max(0, nowMs - allowance.atMs) / 1000) * perSecond;
    allowance.atMs = nowMs;
    allowance.errors = Math.min(burst, allowance.errors + refill);
    allowance.slow = Math.min(burst, allowance.slow + refill);
    allowance.sample = Math.min(burst, allowance.sample + refill);
    if (nowMs - allowance.slowAtMs >= 1000) {
      allowance.slowNs = total.count > SLOW_AFTER ? percentileNs(total.histogram, SLOW_PERCENTILE, total.maxNs) : Number.POSITIVE_INFINITY;
      allowance.slowAtMs = nowMs;
    }
    if (error && allowance.errors >= 1) {
      allowance.errors--;
      return true;
    }
    if (durationNs > allowance.slowNs && allowance.slow >= 1) {
      allowance.slow--;
      return true;
    }
    if (allowance.sample >= 1) {
      allowance.sample--;
      return true;
    }
    return false;
  }

  private lookBackAt(span: ReadableSpan): void {
    if (this.limits.maxLookBack <= 0) return;
    this.lookBack.push(new SummarizedRoot(span));
    if (this.lookBack.length - this.lookBackHead > this.limits.maxLookBack) this.lookBack[this.lookBackHead++] = undefined;
    // The forgotten head is cut off now and then, not on every root.
    if (this.lookBackHead > this.limits.maxLookBack) {
      this.lookBack = this.lookBack.slice(this.lookBackHead);
      this.lookBackHead = 0;
    }
  }

  private remember(traceId: string, keep: boolean): void {
    this.decided.delete(traceId);
    this.decided.set(traceId, keep);
    if (this.decided.size > this.limits.maxDecided) this.decided.delete(this.decided.keys().next().value as string);
  }
}
