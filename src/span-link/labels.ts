import type { Context } from '@opentelemetry/api';
import type { SampleCount } from '../profiling/sampler.js';
import { otelApi } from '../vendor.js';
import { LABEL_SPAN_ID, LABEL_SPAN_NAME, LABEL_TRACE_ID, MAX_LABEL_VALUE_BYTES } from '../wire.js';
import { spanNameShapes } from './span-name-shape.js';

/** Characters of 4 UTF-8 bytes at most: a name this short always fits. */
const ALWAYS_FITS = MAX_LABEL_VALUE_BYTES / 4;

/** `value` cut to MAX_LABEL_VALUE_BYTES of UTF-8, at a code point, with `…` where it was cut. */
export function fitLabelValue(value: string): string {
  if (value.length <= ALWAYS_FITS || Buffer.byteLength(value) <= MAX_LABEL_VALUE_BYTES) return value;
  const ellipsis = '…';
  let bytes = Buffer.byteLength(ellipsis);
  let cut = '';
  for (const char of value) {
    bytes += Buffer.byteLength(char);
    if (bytes > MAX_LABEL_VALUE_BYTES) break;
    cut += char;
  }
  return cut + ellipsis;
}

/** The part of a span we read: its name can change until it ends (an HTTP span learns its route). */
interface NamedSpan {
  readonly name: string;
}

/**
 * What a profile sample taken inside a span's subtree is labelled with. One object per labelling
 * span, shared by all its descendants, and handed to the sampler as its context: the sampler keeps
 * a reference per sample, so the name is read when the window is serialized, not when the span
 * started (`GET` becomes `GET /users/:id` once the router ran).
 */
export class SpanLabels {
  private span: NamedSpan | undefined;
  private finalName = '';
  /**
   * When the span ended, in microseconds of the monotonic clock (`performance.now()`); undefined
   * while it runs. Not the span's own end time: that is read from the system clock, which NTP or
   * a resumed VM can step between the span's end and the window's cut.
   */
  endedAtMicros: number | undefined;
  /**
   * The sampler's holder of these labels while the span runs (span-link/frame-context.ts), held
   * weakly: the holder holds them strongly (through their SampleContext, from a native global handle). Dropped when the
   * span ends: V8's scavenges treat a WeakRef's target as strong, so a reference kept past the span
   * made the labels and their holder (and all they reach) outlive every young-generation collection
   * until a major one.
   */
  frameHolder: WeakRef<object> | undefined = undefined;
  /** What the sampler records with the samples taken in this span, once linking handed it one (`sampleContextOf`). */
  sampleContext: SampleContext | undefined = undefined;
  /** Called once when the span ends: a profile window waits for it (window-hold.ts). */
  whenEnded: (() => void) | undefined = undefined;

  constructor(
    readonly spanId: string,
    readonly traceId: string,
    span: NamedSpan,
  ) {
    this.span = span;
  }

  get spanName(): string {
    return this.span ? this.span.name : this.finalName;
  }

  /** The span ended: keep its last name and end time, and let the span object and the holder go. */
  ended(name: string, endedAtMicros: number): void {
    this.finalName = name;
    this.endedAtMicros = endedAtMicros;
    this.span = undefined;
    this.frameHolder = undefined;
    this.sampleContext?.spanEnded();
    if (this.whenEnded) {
      const whenEnded = this.whenEnded;
      this.whenEnded = undefined;
      whenEnded();
    }
  }

  /**
   * Whether a sample taken at `atMicros` (monotonic, as `endedAtMicros`) belongs to this span. Code
   * can keep running in a span's async context after the span ended — a pooled socket's data
   * handler runs in the context of the request that opened the connection, long gone — and that
   * work is not the span's: it is left unlabelled rather than charged to a finished request.
   * `graceMicros` absorbs the error of reading a sample's time (see spanOfSample).
   */
  covers(atMicros: number, graceMicros: number): boolean {
    return this.endedAtMicros === undefined || atMicros <= this.endedAtMicros + graceMicros;
  }

  /** The pprof labels of a sample: the name by its shape (IDs folded, span-name-shape.ts), cut to fit Pyroscope's limit. */
  toLabels(withTraceId: boolean): Record<string, string> {
    const labels: Record<string, string> = { [LABEL_SPAN_ID]: this.spanId, [LABEL_SPAN_NAME]: fitLabelValue(spanNameShapes.of(this.spanName)) };
    if (withTraceId) labels[LABEL_TRACE_ID] = this.traceId;
    return labels;
  }
}

/**
 * What the sampler records with a sample taken in a span, for its labels: the sampler keeps its
 * contexts from native handles, and the AsyncContextFrame holder that hands this to it keeps it a
 * garbage collection longer than the request's own objects (its strong handle is let go from the
 * holder's weak callback, wall.cc `PersistentContextPtr`). So every request's labels would survive
 * a scavenge; this small object survives instead, and lets the labels go when the span ends with
 * no sample recorded since it was made — most requests, at a 10 ms interval. Samples recorded
 * after that read no span, as they would through `SpanLabels.covers`: none was taken in the span.
 */
export class SampleContext {
  constructor(
    public labels: SpanLabels | undefined,
    private readonly count: SampleCount,
    private readonly samplesAtStart: number,
  ) {}

  /** The span ended: its labels are let go unless a sample may carry them. */
  spanEnded(): void {
    if (this.count.samplesTaken() === this.samplesAtStart) this.labels = undefined;
  }
}

/** The context the sampler records for `labels`' span: one per labels object, made at its first use. */
export function sampleContextOf(labels: SpanLabels, count: SampleCount): SampleContext {
  return (labels.sampleContext ??= new SampleContext(labels, count, count.samplesTaken()));
}

/**
 * Span object → the labels its samples carry, kept on the span itself under a symbol of this
 * registry: the labels die with their span, as with a WeakMap, without a WeakMap's cost — every
 * span of every request is registered, and weak-map entries are slower to add and have to be
 * traced by every garbage collection (docs/performance.md, "CPU per request").
 */
export class LabelRegistry {
  private readonly key = Symbol('pyro-run span labels');

  get(span: object): SpanLabels | undefined {
    return (span as Record<symbol, SpanLabels | undefined>)[this.key];
  }

  set(span: object, labels: SpanLabels): void {
    (span as Record<symbol, SpanLabels | undefined>)[this.key] = labels;
  }

  /** The labels of code running in `context`: those of its span, if we labelled it. */
  of(context: Context): SpanLabels | undefined {
    // The API through its getter: the profiler imports this module where no tracing runs.
    const span = otelApi().trace.getSpan(context);
    return span === undefined ? undefined : this.get(span);
  }
}

/**
 * How far a sample's time may read after its span's end, though taken before it: the sampler
 * stamps samples in epoch microseconds, through the system clock read at each stop, and they are
 * brought back to the monotonic clock through Date.now() read right after it
 * (profiling/epoch-offset.ts), whose millisecond steps make a sample read up to half a
 * millisecond late.
 */
const CLOCK_SKEW_MICROS = 2_000;

/** The sampler's question "whose sample is this?", answered from the context it recorded and when it was taken (monotonic µs): the span's labels, if the span still covered the sample. */
export function spanOfSample(samplingIntervalMicros: number): (sample: { context?: unknown }, sampledAtMicros: number) => SpanLabels | undefined {
  const grace = Math.max(samplingIntervalMicros, CLOCK_SKEW_MICROS);
  return ({ context }, sampledAtMicros) => {
    const labels = context instanceof SampleContext ? context.labels : undefined;
    return labels?.covers(sampledAtMicros, grace) ? labels : undefined;
  };
}
