import type { Context, Span, SpanOptions, Tracer, TracerOptions, TracerProvider } from '@opentelemetry/api';

/**
 * The tracer provider pyro-run registers with the OpenTelemetry API: it hands out tracers that
 * start spans on whichever provider is in charge now — pyro-run's own, until the app's own SDK
 * registers its provider (app-otel/attach.ts). Tracers are taken early and kept: the
 * instrumentations take theirs when they are built and again in `registerInstrumentations`, which
 * the NodeSDK calls before it registers its provider, and app code often takes one at module load.
 * Without the switch they would keep starting spans on pyro-run's provider, under its resource and
 * exporters, after the app's took over.
 */
export class TracerSwitch implements TracerProvider {
  private target: TracerProvider;
  /** Bumped at every switch: each tracer takes its target's tracer again when it sees a new one. */
  generation = 0;
  private readonly tracers = new Map<string, SwitchedTracer>();

  constructor(target: TracerProvider) {
    this.target = target;
  }

  get current(): TracerProvider {
    return this.target;
  }

  switchTo(target: TracerProvider): void {
    this.target = target;
    this.generation++;
  }

  getTracer(name: string, version?: string, options?: TracerOptions): Tracer {
    const key = `${name}@${version ?? ''}:${options?.schemaUrl ?? ''}`;
    let tracer = this.tracers.get(key);
    if (tracer === undefined) {
      tracer = new SwitchedTracer(this, name, version, options);
      this.tracers.set(key, tracer);
    }
    return tracer;
  }

  /** Apps reach the SDK provider through the global one (`getDelegate().forceFlush()`): these pass on to the one in charge. */
  forceFlush(): Promise<void> {
    return (this.target as { forceFlush?: () => Promise<void> }).forceFlush?.() ?? Promise.resolve();
  }

  shutdown(): Promise<void> {
    return (this.target as { shutdown?: () => Promise<void> }).shutdown?.() ?? Promise.resolve();
  }
}

class SwitchedTracer implements Tracer {
  private tracer: Tracer | undefined;
  private generation = -1;

  constructor(
    private readonly owner: TracerSwitch,
    private readonly name: string,
    private readonly version: string | undefined,
    private readonly options: TracerOptions | undefined,
  ) {}

  private resolve(): Tracer {
    if (this.generation !== this.owner.generation || this.tracer === undefined) {
      this.tracer = this.owner.current.getTracer(this.name, this.version, this.options);
      this.generation = this.owner.generation;
    }
    return this.tracer;
  }

  startSpan(name: string, options?: SpanOptions, context?: Context): Span {
    return this.resolve().startSpan(name, options, context);
  }

  startActiveSpan: Tracer['startActiveSpan'] = function (this: SwitchedTracer, ...args: unknown[]) {
    const tracer = this.resolve();
    return (tracer.startActiveSpan as (...a: unknown[]) => unknown).apply(tracer, args);
  } as Tracer['startActiveSpan'];
}
