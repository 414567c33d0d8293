/**
 * `pyro-run diff --fail-on` rules as tables: what parses (and what a bad rule is told), and which
 * changes break a rule — only changes beyond the noise, by more than the rule allows.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EndpointDiff, RunDiff } from '../../src/diff/compare-runs.js';
import { DEFAULT_NOISE, type MetricChange } from '../../src/diff/metric-change.js';
import { evaluateRules, parseRule, parseRules, type Rule } from '../../src/diff/rules.js';

const MS = 1e6;

describe('parsing a rule', () => {
  const good: [string, Omit<Rule, 'text'>][] = [
    ['cpu-per-request>+10%', { metric: 'cpuPerRequest', direction: '>', threshold: 0.1, relative: true }],
    ['wall-per-request>+15%', { metric: 'wallPerRequest', direction: '>', threshold: 0.15, relative: true }],
    ['p95>+20%', { metric: 'p95', direction: '>', threshold: 0.2, relative: true }],
    ['p50>+5ms', { metric: 'p50', direction: '>', threshold: 5 * MS, relative: false }],
    ['p50 > 2.5ms', { metric: 'p50', direction: '>', threshold: 2.5 * MS, relative: false }],
    ['p95>+300us', { metric: 'p95', direction: '>', threshold: 300e3, relative: false }],
    ['p95>+300µs', { metric: 'p95', direction: '>', threshold: 300e3, relative: false }],
    ['p95>+1s', { metric: 'p95', direction: '>', threshold: 1e9, relative: false }],
    ['cpu-per-request<-10%', { metric: 'cpuPerRequest', direction: '<', threshold: -0.1, relative: true }],
    ['cpu-per-request>+0%', { metric: 'cpuPerRequest', direction: '>', threshold: 0, relative: true }],
  ];
  for (const [text, rule] of good)
    it(`${text} reads as ${rule.metric} ${rule.direction} ${rule.threshold}`, () => assert.deepEqual(parseRule(text), { text: text.trim(), ...rule }));

  const bad: [string, RegExp][] = [
    ['cpu>+10%', /unknown metric 'cpu' \(one of cpu-per-request, wall-per-request, p50, p95\)/],
    ['p95>+10', /is not a rule: write it as METRIC>\+N%/],
    ['p95>+10parsecs', /unknown unit 'parsecs'/],
    ['p95>-10%', /a > rule takes an increase/],
    ['p95<10%', /a < rule takes a decrease/],
    ['p95=10%', /is not a rule/],
    ['', /is not a rule/],
  ];
  for (const [text, message] of bad) it(`'${text}' is refused: ${message.source}`, () => assert.match((parseRule(text) as { error: string }).error, message));

  it('every bad rule is reported, not just the first', () => {
    const { rules, errors } = parseRules(['p95>+20%', 'cpu>+1%', 'p50>-1ms']);
    assert.deepEqual(
      rules.map((rule) => rule.text),
      ['p95>+20%'],
    );
    assert.equal(errors.length, 2);
  });
});

const change = (before: number, after: number, beyondNoise: boolean): MetricChange => ({
  before,
  after,
  change: after - before,
  relativeChange: before === 0 ? null : (after - before) / before,
  interval: { low: 0, high: 0 },
  beyondNoise,
});

function diffOf(metrics: EndpointDiff['metrics']): RunDiff {
  const run = { dir: '/r', service: 'shop', startedAt: undefined, requests: 100 };
  const endpoint: EndpointDiff = {
    name: 'POST /checkout',
    presence: 'both',
    requests: { before: 100, after: 100 },
    judged: true,
    beyondNoise: true,
    metrics,
    functions: [],
  };
  return { before: run, after: run, noise: { ...DEFAULT_NOISE, comparisons: 4, z: 3 }, endpoints: [endpoint] };
}

describe('which changes break a rule', () => {
  const rule = (text: string) => parseRule(text) as Rule;
  const cases: [string, string, EndpointDiff['metrics'], boolean][] = [
    ['+20% beyond the noise', 'cpu-per-request>+10%', { cpuPerRequest: change(10, 12, true) }, true],
    ['+20% within the noise: never, however large it looks', 'cpu-per-request>+10%', { cpuPerRequest: change(10, 12, false) }, false],
    ['+5% beyond the noise, under the rule', 'cpu-per-request>+10%', { cpuPerRequest: change(100, 105, true) }, false],
    ['a drop, against an increase rule', 'cpu-per-request>+10%', { cpuPerRequest: change(12, 10, true) }, false],
    ['+6 ms on p50 against +5ms', 'p50>+5ms', { p50: change(20 * MS, 26 * MS, true) }, true],
    ['+4 ms on p50 against +5ms', 'p50>+5ms', { p50: change(20 * MS, 24 * MS, true) }, false],
    ['-20% against a decrease rule', 'p95<-10%', { p95: change(10, 8, true) }, true],
    ['from 0 CPU to some, against a relative rule', 'cpu-per-request>+10%', { cpuPerRequest: change(0, 5, true) }, true],
    ['a metric the runs did not record', 'wall-per-request>+15%', {}, false],
  ];
  for (const [name, text, metrics, broken] of cases) {
    it(`${name}: ${broken ? 'broken' : 'kept'}`, () => assert.equal(evaluateRules(diffOf(metrics), [rule(text)]).length, broken ? 1 : 0));
  }

  it('a breach says the endpoint, the metric, before, after, the change and the rule', () => {
    assert.deepEqual(evaluateRules(diffOf({ cpuPerRequest: change(10, 12, true) }), [rule('cpu-per-request>+10%')]), [
      { endpoint: 'POST /checkout', metric: 'cpuPerRequest', rule: 'cpu-per-request>+10%', before: 10, after: 12, change: 2, relativeChange: 0.2 },
    ]);
  });
});
