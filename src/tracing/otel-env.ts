/**
 * The standard OTEL_* variables the trace SDK reads, parsed the way @opentelemetry/sdk-node
 * parses them (sdk-node create-from-env.ts / utils.ts), as pure functions of an env object.
 * Bad values fall back to the SDK's own default with a problem to report, as the SDK does.
 */
import type { Env } from '../config/index.js';

export type SamplerSpec =
  | { kind: 'always_on' | 'always_off' | 'parentbased_always_on' | 'parentbased_always_off' }
  | { kind: 'traceidratio' | 'parentbased_traceidratio'; ratio: number };

const SAMPLERS = ['always_on', 'always_off', 'parentbased_always_on', 'parentbased_always_off', 'traceidratio', 'parentbased_traceidratio'] as const;

/** OTEL_TRACES_SAMPLER(_ARG); undefined = the SDK default (parent-based always-on). */
export function samplerFromEnv(env: Env, problems: string[]): SamplerSpec | undefined {
  const name = env.OTEL_TRACES_SAMPLER?.trim();
  if (!name) return undefined;
  if (!(SAMPLERS as readonly string[]).includes(name)) {
    problems.push(`unknown OTEL_TRACES_SAMPLER "${name}"; using the default sampler`);
    return undefined;
  }
  if (name !== 'traceidratio' && name !== 'parentbased_traceidratio')
    return { kind: name as Exclude<(typeof SAMPLERS)[number], 'traceidratio' | 'parentbased_traceidratio'> };
  const raw = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = raw ? Number(raw) : Number.NaN;
  if (!(ratio >= 0 && ratio <= 1)) {
    problems.push(`OTEL_TRACES_SAMPLER_ARG must be a ratio between 0 and 1; using 1`);
    return { kind: name, ratio: 1 };
  }
  return { kind: name, ratio };
}

export type PropagatorName = 'tracecontext' | 'baggage' | 'b3' | 'b3multi';
const PROPAGATORS: readonly PropagatorName[] = ['tracecontext', 'baggage', 'b3', 'b3multi'];

/** OTEL_PROPAGATORS; the default is tracecontext + baggage, `none` means no propagation. */
export function propagatorsFromEnv(env: Env, problems: string[]): PropagatorName[] {
  const raw = env.OTEL_PROPAGATORS?.trim();
  if (!raw) return ['tracecontext', 'baggage'];
  const names = [
    ...new Set(
      raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    ),
  ];
  if (names.includes('none')) return [];
  const known = names.filter((n): n is PropagatorName => (PROPAGATORS as readonly string[]).includes(n));
  for (const name of names) if (!known.includes(name as PropagatorName)) problems.push(`propagator "${name}" in OTEL_PROPAGATORS is not available`);
  return known;
}

export type DetectorName = 'env' | 'host' | 'os' | 'process' | 'serviceinstance';
const DETECTORS: readonly DetectorName[] = ['env', 'host', 'os', 'process', 'serviceinstance'];

/**
 * OTEL_NODE_RESOURCE_DETECTORS. The default is the NodeSDK's (env, process, host) plus
 * serviceinstance: forked workers and cluster members share a service name, and their spans must
 * still tell one process from another.
 */
export function detectorsFromEnv(env: Env, problems: string[]): DetectorName[] {
  const raw = env.OTEL_NODE_RESOURCE_DETECTORS?.trim();
  if (!raw) return ['env', 'process', 'host', 'serviceinstance'];
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (names.includes('all')) return [...DETECTORS];
  if (names.includes('none')) return [];
  const known = names.filter((n): n is DetectorName => (DETECTORS as readonly string[]).includes(n));
  for (const name of names)
    if (!known.includes(name as DetectorName)) problems.push(`resource detector "${name}" in OTEL_NODE_RESOURCE_DETECTORS is not available`);
  return known;
}

export interface SpanLimitsSpec {
  attributeCountLimit?: number;
  attributeValueLengthLimit?: number;
  eventCountLimit?: number;
  linkCountLimit?: number;
  attributePerEventCountLimit?: number;
  attributePerLinkCountLimit?: number;
}

/** OTEL_SPAN_* / OTEL_ATTRIBUTE_* limits (only the ones set). */
export function spanLimitsFromEnv(env: Env): SpanLimitsSpec {
  const num = (...names: string[]) => {
    for (const name of names) {
      const raw = env[name]?.trim();
      if (raw && Number.isFinite(Number(raw))) return Number(raw);
    }
    return undefined;
  };
  const limits: SpanLimitsSpec = {
    attributeCountLimit: num('OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT', 'OTEL_ATTRIBUTE_COUNT_LIMIT'),
    attributeValueLengthLimit: num('OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT', 'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT'),
    eventCountLimit: num('OTEL_SPAN_EVENT_COUNT_LIMIT'),
    linkCountLimit: num('OTEL_SPAN_LINK_COUNT_LIMIT'),
    attributePerEventCountLimit: num('OTEL_SPAN_ATTRIBUTE_PER_EVENT_COUNT_LIMIT'),
    attributePerLinkCountLimit: num('OTEL_SPAN_ATTRIBUTE_PER_LINK_COUNT_LIMIT'),
  };
  return Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)) as SpanLimitsSpec;
}
