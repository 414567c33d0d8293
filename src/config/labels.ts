import { LABEL_SERVICE_NAME, LABEL_SPAN_ID, LABEL_SPAN_NAME, LABEL_THREAD_NAME, LABEL_TRACE_ID } from '../wire.js';
import { bad, ok, type Parsed } from './parse.js';
import type { Env, Problem } from './types.js';

/**
 * Label keys pyro-run sends itself, which Grafana joins profiles to spans and services on: a static
 * label of the same name would stand in for them.
 */
const RESERVED_LABELS: ReadonlySet<string> = new Set([LABEL_SERVICE_NAME, LABEL_SPAN_ID, LABEL_SPAN_NAME, LABEL_TRACE_ID, LABEL_THREAD_NAME]);
/**
 * Pyroscope's default bounds on a series (pkg/validation limits.go): 30 label names, of which 6 are
 * sent with every profile (__name__, __delta__, service_name, pyroscope_spy, span_name,
 * thread_name), and names of at most 1024 bytes. A label past them would get every profile rejected.
 */
const MAX_STATIC_LABELS = 24;
const MAX_LABEL_NAME_BYTES = 1024;

/**
 * Each entry of `k=v,k2=v2` (the PYROSCOPE_LABELS form of the Java/.NET SDKs), as a label or as
 * what is wrong with it. Keys must survive the server's label-set parser (`[A-Za-z0-9_.]`, not
 * starting `__`); values are escaped at upload time.
 */
function labelEntries(raw: string): { labels: Record<string, string>; wrong: string[] } {
  const labels: Record<string, string> = {};
  const wrong: string[] = [];
  for (const part of raw.split(',')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    const key = eq > 0 ? part.slice(0, eq).trim() : '';
    const value = part.slice(eq + 1).trim();
    if (eq <= 0) wrong.push(`"${part.trim()}" is not key=value`);
    else if (!/^[A-Za-z_][A-Za-z0-9_.]*$/.test(key)) wrong.push(`label key "${key}" may only hold letters, digits, _ and . and must not start with a digit`);
    else if (key.startsWith('__')) wrong.push(`label key "${key}" starts with __, which Pyroscope reserves`);
    else if (RESERVED_LABELS.has(key)) wrong.push(`label key "${key}" is one pyro-run sends itself (Grafana joins profiles on it)`);
    else if (Buffer.byteLength(key) > MAX_LABEL_NAME_BYTES)
      wrong.push(`label key "${key.slice(0, 32)}…" is longer than Pyroscope's ${MAX_LABEL_NAME_BYTES} bytes`);
    else if (value === '') wrong.push(`label "${key}" has an empty value`);
    else if (Object.keys(labels).length >= MAX_STATIC_LABELS && !(key in labels))
      wrong.push(`label "${key}" is past the ${MAX_STATIC_LABELS} static labels Pyroscope's series allow`);
    else labels[key] = value;
  }
  return { labels, wrong };
}

/** Static labels `k=v,k2=v2`: all must be right (the CLI rejects a list with a wrong one). */
export function parseLabels(raw: string): Parsed<Record<string, string>> {
  const { labels, wrong } = labelEntries(raw);
  return wrong.length === 0 ? ok(labels) : bad(wrong.join('; '));
}

/** The labels variable in the app: the right entries are kept, the wrong ones reported. */
export function readLabels(env: Env, name: string, problems: Problem[]): Record<string, string> {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return {};
  const { labels, wrong } = labelEntries(raw);
  if (wrong.length > 0)
    problems.push({
      env: name,
      message: `${name} ${wrong.join('; ')}`,
      instead: Object.keys(labels).length > 0 ? 'the other labels are used' : 'no static labels are sent',
    });
  return labels;
}
