// The `/ingest?name=<service>{k=v,...}` parser, ported state for state from
// grafana/pyroscope api/model/labelset/labelset.go (Parse) and validate.go.
// Quirks of the real parser that a client must live with, kept on purpose:
// - there is no escaping: a value runs to the next ',' or '}' and may contain
//   '=', '{' or spaces; keys and values are trimmed of surrounding whitespace;
// - the service name allows [A-Za-z0-9_.\-/], label keys [A-Za-z0-9_.];
// - `__name__` is the reserved key the service name is stored under, so a
//   `{__name__=x}` label silently replaces the service name;
// - anything after the closing '}' is parsed as more labels, and a key with
//   no '=' before '}' is dropped without error.
// Which parsed labels reach storage is decided later by
// pkg/model IsLabelAllowedForIngestion: keys starting with "__" are dropped
// except `__session_id__`.

export class NameError extends Error {
  override name = 'NameError';
}

export const RESERVED_NAME_LABEL = '__name__';
const ALLOWED_PRIVATE_LABELS = new Set(['__session_id__']);

export interface ParsedName {
  /** `__name__` of the label set: the service (app) name. */
  serviceName: string;
  /** Every parsed label except `__name__`, before the ingestion filter. */
  labels: Record<string, string>;
}

function isLabelNameChar(ch: string): boolean {
  return /^[A-Za-z0-9_.]$/.test(ch);
}

function isServiceNameChar(ch: string): boolean {
  return ch === '-' || ch === '/' || isLabelNameChar(ch);
}

/** Go's %q for a rune, close enough for error messages. */
function quoteRune(ch: string): string {
  return `'${ch === "'" ? "\\'" : ch}'`;
}

function validateServiceName(name: string): void {
  if (name.length === 0) throw new NameError('service name is required');
  for (const ch of name) {
    if (!isServiceNameChar(ch)) {
      throw new NameError(`invalid service name: ${name}: character is not allowed: ${quoteRune(ch)}`);
    }
  }
}

function validateLabelName(key: string): void {
  if (key.length === 0) throw new NameError('label name is required');
  for (const ch of key) {
    if (!isLabelNameChar(ch)) throw new NameError(`invalid label name: ${key}: character is not allowed: ${quoteRune(ch)}`);
  }
}

type State = 'name' | 'key' | 'value' | 'done';

/** Parses like labelset.Parse; throws NameError with the server's message. */
export function parseName(name: string): ParsedName {
  const labels = new Map<string, string>();
  let state: State = 'name';
  let key = '';
  let value = '';
  // The real parser appends '{' so a bare service name terminates the name state.
  for (const ch of `${name}{`) {
    switch (state) {
      case 'name':
        if (ch === '{') {
          const serviceName = value.trim();
          validateServiceName(serviceName);
          labels.set(RESERVED_NAME_LABEL, serviceName);
          state = 'key';
        } else {
          value += ch;
        }
        break;
      case 'key':
        if (ch === '}') {
          state = 'done';
        } else if (ch === '=') {
          state = 'value';
          value = '';
        } else {
          key += ch;
        }
        break;
      case 'value':
        if (ch === ',' || ch === '}') {
          state = 'key';
          const trimmedKey = key.trim();
          if (trimmedKey !== RESERVED_NAME_LABEL) validateLabelName(trimmedKey);
          labels.set(trimmedKey, value.trim());
          key = '';
        } else {
          value += ch;
        }
        break;
      case 'done':
        break;
    }
  }
  const serviceName = labels.get(RESERVED_NAME_LABEL) ?? '';
  labels.delete(RESERVED_NAME_LABEL);
  return { serviceName, labels: Object.fromEntries(labels) };
}

/** pkg/model IsLabelAllowedForIngestion. */
export function isLabelAllowedForIngestion(key: string): boolean {
  return !key.startsWith('__') || ALLOWED_PRIVATE_LABELS.has(key);
}

export function ingestedLabels(labels: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(labels).filter(([key]) => isLabelAllowedForIngestion(key)));
}
