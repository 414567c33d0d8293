import { isProfileType, PROFILE_TYPE_NAMES, type ProfileType } from '../profiling/profile-types.js';
import { NO_EXPORTER, SPAN_EXPORTERS, type SpanExporterName } from './types.js';

/**
 * The parsers of single values: raw env string in, the value or what is wrong with it out. Pure;
 * a message never echoes the value, since some settings are secrets.
 */

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };
export const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
export const bad = (message: string): Parsed<never> => ({ ok: false, message });

export function integer(min: number, max: number, unit: string) {
  return (raw: string): Parsed<number> => {
    const text = raw.trim();
    if (!/^\d+$/.test(text)) return bad(`must be a whole number of ${unit}`);
    const value = Number(text);
    if (value < min || value > max) return bad(`must be between ${min} and ${max} ${unit}`);
    return ok(value);
  };
}

/**
 * A whole number between `min` and `max`, or `off` (also `0`, `false`, `no`) for none: 0. For a
 * watch that a threshold turns on, whose natural "never" is no threshold at all.
 */
export function integerOrOff(min: number, max: number, unit: string) {
  const number = integer(min, max, unit);
  return (raw: string): Parsed<number> => {
    const text = raw.trim().toLowerCase();
    if (['off', 'false', 'no'].includes(text) || /^0+$/.test(text)) return ok(0);
    const parsed = number(text);
    return parsed.ok ? parsed : bad(`${parsed.message}, or off`);
  };
}

export function positiveNumber(max: number, unit: string) {
  return (raw: string): Parsed<number> => {
    const text = raw.trim();
    if (!/^\d+(\.\d+)?$/.test(text) || Number(text) <= 0) return bad(`must be a positive number of ${unit}`);
    const value = Number(text);
    if (value > max) return bad(`must be at most ${max} ${unit}`);
    return ok(value);
  };
}

export function oneOf<T extends string>(allowed: readonly T[]) {
  return (raw: string): Parsed<T> => {
    const value = raw.trim().toLowerCase() as T;
    return allowed.includes(value) ? ok(value) : bad(`must be one of ${allowed.join(', ')}`);
  };
}

export function onOff(raw: string): Parsed<boolean> {
  const value = raw.trim().toLowerCase();
  if (['on', 'true', '1', 'yes'].includes(value)) return ok(true);
  if (['off', 'false', '0', 'no'].includes(value)) return ok(false);
  return bad('must be on or off');
}

/** A switch read outside the table (OTEL_SDK_DISABLED): on where onOff says on; anything else, a wrong value included, leaves it off without a problem. */
export function switchedOn(raw: string | undefined): boolean {
  const parsed = raw === undefined ? undefined : onOff(raw);
  return parsed?.ok === true && parsed.value;
}

export const text = (raw: string): Parsed<string> => (raw.trim() === '' ? bad('must not be empty') : ok(raw.trim()));

function checkUrl(raw: string): Parsed<string> {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return bad('must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return bad('must be an http:// or https:// URL');
  return ok(url.toString());
}

/** A base URL: paths are appended to it, so trailing slashes go. */
export function parseUrl(raw: string): Parsed<string> {
  const checked = checkUrl(raw);
  return checked.ok ? ok(checked.value.replace(/\/+$/, '')) : checked;
}

/** A full URL that the OTel spec says to use as given (OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT). */
export function parseExactUrl(raw: string): Parsed<string> {
  const checked = checkUrl(raw);
  return checked.ok ? ok(raw.trim()) : checked;
}

/**
 * Header lists in the OTEL_EXPORTER_OTLP_HEADERS form: `k=v,k2=v2`, values URL-encoded.
 * Messages never echo a value: headers carry credentials.
 */
export function parseHeaders(raw: string): Parsed<Record<string, string>> {
  const headers: Record<string, string> = {};
  for (const part of raw.split(',')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    const name = eq > 0 ? part.slice(0, eq).trim() : '';
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) return bad('each entry must be name=value with a valid header name');
    let value: string;
    try {
      value = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      return bad(`the value of header "${name}" is not valid URL encoding`);
    }
    headers[name.toLowerCase()] = value;
  }
  return ok(headers);
}

/**
 * OTEL_RESOURCE_ATTRIBUTES (`k=v,...`, URL-encoded values) as the OTel env detector reads it:
 * entries without a key, or whose value is not valid URL encoding, are left out.
 */
export function parseResourceAttributes(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (raw ?? '').split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    try {
      out[part.slice(0, eq).trim()] = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      // Not valid URL encoding: the detector drops it too.
    }
  }
  return out;
}

/** A comma-separated list of package names and script paths (launchers.ts isSkipped says how each matches). */
export function parseSkipList(raw: string): Parsed<string[]> {
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) return bad('must name at least one package or script');
  const blank = entries.find((entry) => /\s/.test(entry));
  return blank === undefined ? ok(entries) : bad(`"${blank}" holds white space: package names and script paths are comma-separated`);
}

export function parseProfiles(raw: string): Parsed<ProfileType[]> {
  const words = raw
    .split(',')
    .map((w) => w.trim().toLowerCase())
    .filter((w) => w !== '');
  if (words.length === 1 && words[0] === 'none') return ok([]);
  const out: ProfileType[] = [];
  for (const word of words) {
    if (!isProfileType(word)) return bad(`unknown profile type "${word}" (known: ${PROFILE_TYPE_NAMES.join(', ')}, or none)`);
    if (!out.includes(word)) out.push(word);
  }
  if (out.length === 0) return bad(`must list profile types (${PROFILE_TYPE_NAMES.join(', ')}) or be none`);
  // V8 has one sampling heap profiler per isolate; its allocation mode restarts every window, which would empty the in-use profile.
  if (out.includes('heap') && out.includes('alloc'))
    return bad('heap and alloc cannot be on together (V8 has one heap sampler, and allocation profiles restart it every window); choose one');
  return ok(out);
}

/** An OTEL_<SIGNAL>S_EXPORTER list as sdk-node reads it (core's getStringListFromEnv, each name once): names trimmed, blanks dropped, in the order given; lower-cased too. */
export function exporterList(raw: string | undefined): string[] {
  return [
    ...new Set(
      (raw ?? '')
        .split(',')
        .map((name) => name.trim().toLowerCase())
        .filter((name) => name !== ''),
    ),
  ];
}

/**
 * Whether an OTEL_*_EXPORTER list asks for any exporter: empty and `none` ask for none, and `none`
 * anywhere in the list wins, as in sdk-node (utils.ts getMetricReadersFromEnv, the logs set-up).
 */
export function exportersAskedFor(raw: string | undefined): boolean {
  const names = exporterList(raw);
  return names.length > 0 && !names.includes(NO_EXPORTER);
}

/**
 * OTEL_TRACES_EXPORTER, a comma-separated list as sdk-node reads it (utils.ts
 * getSpanProcessorsFromEnv): each exporter once, `none` alone for no export. Unlike sdk-node, which
 * skips a name it does not know and turns `none` beside others into its default, either makes the
 * whole value wrong here, so that pyro-run's rule holds: a wrong value is one problem, and the
 * default stands in for it.
 */
export function parseTracesExporters(raw: string): Parsed<SpanExporterName[]> {
  const names = exporterList(raw);
  if (names.length === 1 && names[0] === NO_EXPORTER) return ok([]);
  if (names.includes(NO_EXPORTER)) return bad(`lists ${NO_EXPORTER} with other exporters`);
  const unknown = names.find((name) => !(SPAN_EXPORTERS as readonly string[]).includes(name));
  if (unknown !== undefined) return bad(`names "${unknown}", which is not one of ${[...SPAN_EXPORTERS, NO_EXPORTER].join(', ')}`);
  if (names.length === 0) return bad(`must list exporters (${SPAN_EXPORTERS.join(', ')}) or be ${NO_EXPORTER}`);
  return ok(names as SpanExporterName[]);
}
