/**
 * `--fail-on` rules: `cpu-per-request>+10%`, `wall-per-request>+15%`, `p95>+20%`, `p50>+5ms`,
 * `p95<-10%`. A rule is broken by an endpoint in both runs whose metric changed beyond the noise
 * by more than the rule allows: a change within the noise never fails a build, however large it
 * looks. Parsing is separate from evaluating so a bad rule is reported before any recording is
 * read. Pure.
 */
import type { RunDiff } from './compare-runs.js';
import type { MetricChange, MetricName } from './metric-change.js';

/** Metric names as rules spell them. */
export const RULE_METRICS: Readonly<Record<string, MetricName>> = {
  'cpu-per-request': 'cpuPerRequest',
  'wall-per-request': 'wallPerRequest',
  p50: 'p50',
  p95: 'p95',
};

/** Nanoseconds per unit; `%` is relative to the before value. */
const UNITS: Readonly<Record<string, number>> = { ns: 1, us: 1e3, µs: 1e3, ms: 1e6, s: 1e9 };

export interface Rule {
  /** As written, for the messages. */
  text: string;
  metric: MetricName;
  /** `>`: an increase beyond the threshold; `<`: a decrease beyond it. */
  direction: '>' | '<';
  /** Signed: a fraction of the before value (0.1 for +10%), or nanoseconds. */
  threshold: number;
  relative: boolean;
}

const RULE = /^([a-z0-9-]+)\s*([<>])\s*([+-]?)(\d+(?:\.\d+)?)\s*(%|[a-zµ]+)$/;

/** A rule from its text, or the reason it is not one. */
export function parseRule(text: string): Rule | { error: string } {
  const match = RULE.exec(text.trim());
  const shape = `write it as METRIC>+N% or METRIC>+Nms (METRIC: ${Object.keys(RULE_METRICS).join(', ')}; units: %, ${Object.keys(UNITS).join(', ')})`;
  if (match === null) return { error: `'${text}' is not a rule: ${shape}` };
  const [, name, direction, sign, amount, unit] = match as unknown as [string, string, '>' | '<', string, string, string];
  const metric = RULE_METRICS[name];
  if (metric === undefined) return { error: `'${text}': unknown metric '${name}' (one of ${Object.keys(RULE_METRICS).join(', ')})` };
  const relative = unit === '%';
  const scale = relative ? 0.01 : UNITS[unit];
  if (scale === undefined) return { error: `'${text}': unknown unit '${unit}' (one of %, ${Object.keys(UNITS).join(', ')})` };
  // `>` watches for increases and `<` for decreases: `p95>-5%` would fire on no change at all.
  if (direction === '>' && sign === '-') return { error: `'${text}': a > rule takes an increase (+N)` };
  if (direction === '<' && sign !== '-') return { error: `'${text}': a < rule takes a decrease (-N)` };
  const magnitude = Number(amount) * scale;
  return { text: text.trim(), metric, direction, threshold: direction === '>' ? magnitude : -magnitude, relative };
}

/** Every rule, or every reason some are not rules. */
export function parseRules(texts: readonly string[]): { rules: Rule[]; errors: string[] } {
  const rules: Rule[] = [];
  const errors: string[] = [];
  for (const text of texts) {
    const parsed = parseRule(text);
    if ('error' in parsed) errors.push(parsed.error);
    else rules.push(parsed);
  }
  return { rules, errors };
}

export interface Breach {
  endpoint: string;
  metric: MetricName;
  rule: string;
  /** Nanoseconds. */
  before: number;
  after: number;
  change: number;
  relativeChange: number | null;
}

/** Whether an endpoint's change of the rule's metric breaks it. A relative rule on a metric that was 0 before: any increase breaks a `>` rule. */
function breaks(metric: MetricChange, rule: Rule): boolean {
  if (!metric.beyondNoise) return false;
  const value = rule.relative ? (metric.relativeChange ?? (metric.change > 0 ? Infinity : metric.change < 0 ? -Infinity : 0)) : metric.change;
  return rule.direction === '>' ? value > rule.threshold : value < rule.threshold;
}

/** Every (endpoint, rule) broken, in the diff's endpoint order then the rules' order. */
export function evaluateRules(diff: RunDiff, rules: readonly Rule[]): Breach[] {
  const breaches: Breach[] = [];
  for (const endpoint of diff.endpoints) {
    for (const rule of rules) {
      const metric = endpoint.metrics[rule.metric];
      if (metric === undefined || !breaks(metric, rule)) continue;
      const { before, after, change, relativeChange } = metric;
      breaches.push({ endpoint: endpoint.name, metric: rule.metric, rule: rule.text, before, after, change, relativeChange });
    }
  }
  return breaches;
}
