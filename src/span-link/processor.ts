import type { Context } from '@opentelemetry/api';
import { otelApi } from '../vendor.js';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace';
import type { SpanScope } from '../config/index.js';
import { ATTR_PROFILE_ID } from '../wire.js';
import { type LabelRegistry, SpanLabels } from './labels.js';

/** The OpenTelemetry API, at the first span: a worker thread's agent loads this module before it knows the app traces. */
let api: ReturnType<typeof otelApi> | undefined;

/**
 * Decides which span's identity a profile sample carries and marks that span for Grafana.
 *
 * Rules (as grafana/otel-profiling-go and otel-profiling-java apply them):
 * - only sampled spans take part; an unsampled one gets no labels and no attribute;
 * - scope `root`: a local root (no parent, or a remote parent) gets its own labels and
 *   `pyroscope.profile.id`; a local child shares its root's labels, so the root's flame graph
 *   holds all the work done under it;
 * - scope `all`: every span gets its own labels and attribute.
 */
export class SpanLinkProcessor implements SpanProcessor {
  constructor(
    private readonly registry: LabelRegistry,
    private readonly scope: SpanScope,
  ) {}

  onStart(span: Span, parentContext: Context): void {
    const own = span.spanContext();
    const { TraceFlags, trace } = (api ??= otelApi());
    if ((own.traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.scope === 'root') {
      const parent = trace.getSpan(parentContext);
      if (parent !== undefined && !parent.spanContext().isRemote && trace.isSpanContextValid(parent.spanContext())) {
        const inherited = this.registry.get(parent);
        if (inherited !== undefined) {
          this.registry.set(span, inherited);
          return;
        }
        // A local parent we never labelled (another tracer provider, a hand-made span context):
        // this span is the root of what we can see, so it labels its own subtree.
      }
    }
    this.registry.set(span, new SpanLabels(own.spanId, own.traceId, span));
    span.setAttribute(ATTR_PROFILE_ID, own.spanId);
  }

  /** Called from within `span.end()`: the monotonic clock's now is when the span's code ended. */
  onEnd(span: ReadableSpan): void {
    const labels = this.registry.get(span);
    if (labels !== undefined && labels.spanId === span.spanContext().spanId) labels.ended(span.name, performance.now() * 1000);
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
