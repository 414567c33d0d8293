/** The OTEL_* variables the lean trace SDK reads, parsed as @opentelemetry/sdk-node parses them. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { detectorsFromEnv, propagatorsFromEnv, samplerFromEnv, spanLimitsFromEnv } from '../../src/tracing/otel-env.js';

describe('samplerFromEnv', () => {
  const cases: { env: Record<string, string>; expected: unknown; problem?: RegExp }[] = [
    { env: {}, expected: undefined },
    { env: { OTEL_TRACES_SAMPLER: 'always_off' }, expected: { kind: 'always_off' } },
    { env: { OTEL_TRACES_SAMPLER: 'parentbased_always_on' }, expected: { kind: 'parentbased_always_on' } },
    { env: { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }, expected: { kind: 'traceidratio', ratio: 0.25 } },
    { env: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }, expected: { kind: 'parentbased_traceidratio', ratio: 0 } },
    { env: { OTEL_TRACES_SAMPLER: 'traceidratio' }, expected: { kind: 'traceidratio', ratio: 1 }, problem: /OTEL_TRACES_SAMPLER_ARG/ },
    { env: { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' }, expected: { kind: 'traceidratio', ratio: 1 }, problem: /between 0 and 1/ },
    { env: { OTEL_TRACES_SAMPLER: 'sometimes' }, expected: undefined, problem: /unknown OTEL_TRACES_SAMPLER "sometimes"/ },
  ];
  for (const c of cases) {
    it(JSON.stringify(c.env), () => {
      const problems: string[] = [];
      assert.deepEqual(samplerFromEnv(c.env, problems), c.expected);
      if (c.problem) assert.match(problems.join('\n'), c.problem);
      else assert.deepEqual(problems, []);
    });
  }
});

describe('propagatorsFromEnv', () => {
  const cases: { value?: string; expected: string[]; problems?: number }[] = [
    { expected: ['tracecontext', 'baggage'] },
    { value: 'b3', expected: ['b3'] },
    { value: 'tracecontext, b3multi, tracecontext', expected: ['tracecontext', 'b3multi'] },
    { value: 'none', expected: [] },
    { value: 'tracecontext,none', expected: [] },
    { value: 'jaeger,baggage', expected: ['baggage'], problems: 1 },
  ];
  for (const c of cases) {
    it(String(c.value), () => {
      const problems: string[] = [];
      assert.deepEqual(propagatorsFromEnv(c.value === undefined ? {} : { OTEL_PROPAGATORS: c.value }, problems), c.expected);
      assert.equal(problems.length, c.problems ?? 0);
    });
  }
});

describe('detectorsFromEnv', () => {
  const cases: { value?: string; expected: string[]; problems?: number }[] = [
    { expected: ['env', 'process', 'host', 'serviceinstance'] },
    { value: 'all', expected: ['env', 'host', 'os', 'process', 'serviceinstance'] },
    { value: 'none', expected: [] },
    { value: 'env,serviceinstance', expected: ['env', 'serviceinstance'] },
    { value: 'env,gcp', expected: ['env'], problems: 1 },
  ];
  for (const c of cases) {
    it(String(c.value), () => {
      const problems: string[] = [];
      assert.deepEqual(detectorsFromEnv(c.value === undefined ? {} : { OTEL_NODE_RESOURCE_DETECTORS: c.value }, problems), c.expected);
      assert.equal(problems.length, c.problems ?? 0);
    });
  }
});

describe('spanLimitsFromEnv', () => {
  it('span-specific limits win over the general attribute ones; unset or junk values are left out', () => {
    assert.deepEqual(
      spanLimitsFromEnv({
        OTEL_ATTRIBUTE_COUNT_LIMIT: '64',
        OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: '32',
        OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '100',
        OTEL_SPAN_EVENT_COUNT_LIMIT: 'many',
      }),
      {
        attributeCountLimit: 32,
        attributeValueLengthLimit: 100,
      },
    );
    assert.deepEqual(spanLimitsFromEnv({}), {});
  });
});
