import type { TextMapPropagator } from '@opentelemetry/api';
import type { Sampler, SpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { Env } from '../config/index.js';
import { otelCore, otelPropagatorB3, otelResources, otelSdkTrace } from '../vendor.js';
import { idGenerator } from './id-generator.js';
import {
  type DetectorName,
  detectorsFromEnv,
  type PropagatorName,
  propagatorsFromEnv,
  type SamplerSpec,
  samplerFromEnv,
  spanLimitsFromEnv,
} from './otel-env.js';

export interface TracerProviderOptions {
  env: Env;
  serviceName: string;
  spanProcessors: SpanProcessor[];
  /** Problems with OTEL_* values, reported by the caller once each. */
  problems: string[];
}

/**
 * The trace half of the OpenTelemetry NodeSDK, assembled from its own parts (sdk-trace, resources,
 * core propagators) and configured from the same OTEL_* variables. Importing
 * @opentelemetry/sdk-node loads its metrics, logs, grpc, zipkin, prometheus and YAML-config
 * pipelines too — about 700 modules and most of our start-up time — for signals we do not send;
 * it is used only when metrics or logs are asked for, and then only for those (see tracing.ts).
 * Nothing here registers with the API: tracing.ts decides what is ours to register.
 */
export function tracerProviderFromEnv(options: TracerProviderOptions): TracerProvider {
  const { TracerProvider } = otelSdkTrace();
  const { env, problems } = options;
  const sampler = samplerOf(samplerFromEnv(env, problems));
  return new TracerProvider({
    resource: resourceOf(options.serviceName, detectorsFromEnv(env, problems)),
    spanLimits: spanLimitsFromEnv(env),
    spanProcessors: options.spanProcessors,
    idGenerator,
    ...(sampler ? { sampler } : {}),
  });
}

/** OTEL_PROPAGATORS as propagators; undefined for `none`. */
export function propagatorFromEnv(env: Env, problems: string[]): TextMapPropagator | undefined {
  return propagatorOf(propagatorsFromEnv(env, problems));
}

function resourceOf(serviceName: string, detectorNames: DetectorName[]) {
  const resources = otelResources();
  const byName = {
    env: resources.envDetector,
    host: resources.hostDetector,
    os: resources.osDetector,
    process: resources.processDetector,
    serviceinstance: resources.serviceInstanceIdDetector,
  } as const;
  const resource = resources
    .defaultResource()
    .merge(resources.detectResources({ detectors: detectorNames.map((name) => byName[name]) }))
    .merge(resources.resourceFromAttributes({ 'service.name': serviceName }));
  // Some detectors answer later (host.id, read from /etc/machine-id). A resource leaves those out of
  // its attributes until waitForAsyncAttributes() has run: the SDK's BatchSpanProcessor calls it
  // before its first export, our span path reads the attributes directly, so it is called here once.
  // The attributes are then read once: the resource builds and keeps them at the first read, which
  // would otherwise fall in the first span request's assembly (otlp-trace-encode.ts, traceRequestOf).
  resource
    .waitForAsyncAttributes?.()
    .then(() => resource.attributes)
    .catch(() => undefined);
  return resource;
}

function samplerOf(spec: SamplerSpec | undefined): Sampler | undefined {
  if (!spec) return undefined;
  const s = otelSdkTrace();
  switch (spec.kind) {
    case 'always_on':
      return new s.AlwaysOnSampler();
    case 'always_off':
      return new s.AlwaysOffSampler();
    case 'parentbased_always_on':
      return new s.ParentBasedSampler({ root: new s.AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new s.ParentBasedSampler({ root: new s.AlwaysOffSampler() });
    case 'traceidratio':
      return new s.TraceIdRatioBasedSampler(spec.ratio);
    case 'parentbased_traceidratio':
      return new s.ParentBasedSampler({ root: new s.TraceIdRatioBasedSampler(spec.ratio) });
  }
}

function propagatorOf(names: PropagatorName[]): TextMapPropagator | undefined {
  const core = otelCore();
  const make = (name: PropagatorName): TextMapPropagator => {
    if (name === 'tracecontext') return new core.W3CTraceContextPropagator();
    if (name === 'baggage') return new core.W3CBaggagePropagator();
    const b3 = otelPropagatorB3();
    return new b3.B3Propagator(name === 'b3multi' ? { injectEncoding: b3.B3InjectEncoding.MULTI_HEADER } : {});
  };
  if (names.length === 0) return undefined;
  const propagators = names.map(make);
  return propagators.length === 1 ? propagators[0] : new core.CompositePropagator({ propagators });
}
