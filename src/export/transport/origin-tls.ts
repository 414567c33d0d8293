import type { OtlpTlsFiles } from '../../config/index.js';

/** TLS material for the connections to one origin: PEM text, as node:tls takes it for `ca`, `cert` and `key`. */
export interface OriginTls {
  /** `https://host:port`, the port always written (originKey). */
  origin: string;
  ca?: string;
  cert?: string;
  key?: string;
}

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

/**
 * The key connections are matched by: scheme, host and port, the port written even when it is the
 * scheme's default and IPv6 hosts without brackets — undici's connector is given the host both
 * ways, a URL's `origin` leaves the default port out.
 */
export function originKey(protocol: string, hostname: string, port: string | number | undefined): string {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  const written = port === undefined || port === '' ? (DEFAULT_PORTS[protocol] ?? '') : String(port);
  return `${protocol}//${host}:${written}`;
}

/** originKey of a URL; undefined when it is not one. */
export function originOfUrl(url: string): string | undefined {
  try {
    const u = new URL(url);
    return originKey(u.protocol, u.hostname, u.port);
  } catch {
    return undefined;
  }
}

/** One signal's endpoint and the TLS files the config names for it. */
export interface EndpointTls {
  url: string;
  files: OtlpTlsFiles;
}

/**
 * Reads the files the config names, once, at start (`read` is the file system at the edge), into
 * material per origin. A file that cannot be read, or files for an endpoint that is not https://,
 * is a problem to warn about once, and the connection goes as without it (Node's trust, no client
 * certificate), as the OTel exporters do. Messages name variables and paths, never contents.
 * Two signals on one origin share the first one's material.
 */
export function originTls(endpoints: readonly EndpointTls[], read: (path: string) => string): { material: OriginTls[]; problems: string[] } {
  const material: OriginTls[] = [];
  const problems: string[] = [];
  for (const { url, files } of endpoints) {
    const named = Object.values(files);
    if (named.length === 0) continue;
    const origin = originOfUrl(url);
    if (origin === undefined || !origin.startsWith('https:')) {
      problems.push(`${named.map((f) => f.env).join(', ')} set, but ${url} is not https: not used`);
      continue;
    }
    if (material.some((m) => m.origin === origin)) continue;
    const entry: OriginTls = { origin };
    for (const [part, file] of Object.entries(files) as [keyof OtlpTlsFiles, NonNullable<OtlpTlsFiles[keyof OtlpTlsFiles]>][]) {
      try {
        entry[part] = read(file.path);
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        problems.push(`could not read ${file.env} (${file.path}${typeof code === 'string' ? `: ${code}` : ''}): not used`);
      }
    }
    // A client certificate goes with its key or not at all.
    if ((entry.cert === undefined) !== (entry.key === undefined)) {
      delete entry.cert;
      delete entry.key;
    }
    if (entry.ca !== undefined || entry.cert !== undefined) material.push(entry);
  }
  return { material, problems };
}
