import type { Attributes, HrTime, Link, SpanContext, SpanKind, SpanStatus } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace';

/** What a view of a span may hold in place of the span's own. */
export interface Replaced {
  attributes?: Attributes;
  events?: TimedEvent[];
}

/**
 * An ended span as it leaves, with its attributes or events replaced (SQL literals sanitized,
 * db-statements.ts; the event-loop blocks charged to it, block-events.ts). The span itself, which
 * the app's own processors may hold, is left as it is. Every view is one class with ReadableSpan's
 * fields as its own, so the encoders and the local recorder read views at one shape; a view made
 * with Object.create would be built from property descriptors and read through its prototype.
 */
class SpanView implements ReadableSpan {
  readonly name: string;
  readonly kind: SpanKind;
  readonly parentSpanContext: SpanContext | undefined;
  readonly startTime: HrTime;
  readonly endTime: HrTime;
  readonly status: SpanStatus;
  readonly attributes: Attributes;
  readonly links: Link[];
  readonly events: TimedEvent[];
  readonly duration: HrTime;
  readonly ended: boolean;
  readonly resource: Resource;
  readonly instrumentationScope: InstrumentationScope;
  readonly droppedAttributesCount: number;
  readonly droppedEventsCount: number;
  readonly droppedLinksCount: number;
  private readonly context: SpanContext;

  constructor(span: ReadableSpan, replaced: Replaced) {
    this.name = span.name;
    this.kind = span.kind;
    this.context = span.spanContext();
    this.parentSpanContext = span.parentSpanContext;
    this.startTime = span.startTime;
    this.endTime = span.endTime;
    this.status = span.status;
    this.attributes = replaced.attributes ?? span.attributes;
    this.links = span.links;
    this.events = replaced.events ?? span.events;
    this.duration = span.duration;
    this.ended = span.ended;
    this.resource = span.resource;
    this.instrumentationScope = span.instrumentationScope;
    this.droppedAttributesCount = span.droppedAttributesCount;
    this.droppedEventsCount = span.droppedEventsCount;
    this.droppedLinksCount = span.droppedLinksCount;
  }

  spanContext(): SpanContext {
    return this.context;
  }
}

/** The span with these fields replaced, as a view of it. */
export function spanWith(span: ReadableSpan, replaced: Replaced): ReadableSpan {
  return new SpanView(span, replaced);
}
