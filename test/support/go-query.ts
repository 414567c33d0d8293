// Parses a raw query string the way Go's net/url.ParseQuery does, because the
// Pyroscope ingest handler reads its parameters with r.URL.Query()
// (grafana/pyroscope pkg/ingester/pyroscope/ingest_handler.go). Differences
// from WHATWG URLSearchParams that matter to a client:
// - a pair containing a raw ';' is dropped (Go >= 1.17), so `name=app{a=b;c}`
//   loses `name` entirely;
// - a pair with a malformed %-escape is dropped instead of kept verbatim;
// - Query().Get returns the first value of a repeated key.

const utf8 = new TextDecoder('utf-8');
const encoder = new TextEncoder();

/** Go's url.QueryUnescape; undefined where Go returns an error. */
export function queryUnescape(s: string): string | undefined {
  const bytes: number[] = [];
  const raw = encoder.encode(s);
  for (let i = 0; i < raw.length; i++) {
    const byte = raw[i] as number;
    if (byte === 0x25) {
      const hex = String.fromCharCode(raw[i + 1] ?? 0, raw[i + 2] ?? 0);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) return undefined;
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(byte === 0x2b ? 0x20 : byte);
    }
  }
  // Go strings are bytes; invalid UTF-8 later iterates as U+FFFD, which the lenient decoder reproduces.
  return utf8.decode(Uint8Array.from(bytes));
}

export function parseGoQuery(rawQuery: string): Map<string, string[]> {
  const values = new Map<string, string[]>();
  for (const pair of rawQuery.split('&')) {
    if (pair === '' || pair.includes(';')) continue;
    const eq = pair.indexOf('=');
    const key = queryUnescape(eq === -1 ? pair : pair.slice(0, eq));
    const value = queryUnescape(eq === -1 ? '' : pair.slice(eq + 1));
    if (key === undefined || value === undefined) continue;
    const existing = values.get(key);
    if (existing) existing.push(value);
    else values.set(key, [value]);
  }
  return values;
}

/** `Query().Get(key)`: the first value, or '' when absent. */
export function goQueryGet(query: Map<string, string[]>, key: string): string {
  return query.get(key)?.[0] ?? '';
}
