import { basicCredential, urlCredentials } from '../util/basic-auth.js';

/**
 * Proxies for pyro-run's own uploads, from the variables curl, Go and Node read: HTTP_PROXY,
 * HTTPS_PROXY and NO_PROXY. Pure: the env comes in, plain data goes out (it travels to the final
 * flush's worker by structured clone), and `proxyFor` says which proxy, if any, a URL goes through.
 *
 * Semantics are Go's (golang.org/x/net/http/httpproxy, what Go's OTel exporters use) except for
 * precedence: an https:// URL uses HTTPS_PROXY only and an http:// URL HTTP_PROXY only; `localhost`
 * and loopback addresses are never proxied; NO_PROXY entries are host names and domains (matching
 * their subdomains), `.domain` (subdomains only), `*.domain` (the same), IP addresses, CIDR ranges,
 * any of them with `:port`, and `*` (nothing is proxied).
 */

/**
 * The variables, lower case first: when both are set, lower case wins, as in curl, in Node's own
 * HTTP client (NODE_USE_ENV_PROXY; lib/internal/http.js parseProxyUrl) and in undici's
 * EnvHttpProxyAgent, which an app's `fetch` uses. (Go reads upper case first.) A blank value
 * counts as not set, as in Node and Go.
 */
export const PROXY_ENV = {
  http: ['http_proxy', 'HTTP_PROXY'],
  https: ['https_proxy', 'HTTPS_PROXY'],
  noProxy: ['no_proxy', 'NO_PROXY'],
} as const;

type Env = Readonly<Record<string, string | undefined>>;
type Scheme = 'http' | 'https';

/** One proxy, as plain data. */
export interface ProxyEndpoint {
  /** Scheme, host and port (`http://proxy:3128`), never credentials: safe to print. */
  url: string;
  /** The variable it came from, for messages. */
  env: string;
  /** base64 of `user:password`, sent as `Proxy-Authorization: Basic …`: a secret. */
  credential: string | undefined;
}

/** One NO_PROXY entry. `port` is '' when the entry names none (any port matches). */
export type NoProxyRule =
  | { kind: 'all' }
  /** An IP address (`prefix` the full length) or a CIDR range (no port, as in Go). */
  | { kind: 'ip'; address: string; prefix: number; family: 'ipv4' | 'ipv6'; port: string }
  /** `suffix` is `.example.com`; `exact` means `example.com` itself matches too (the entry had no leading dot). */
  | { kind: 'domain'; suffix: string; exact: boolean; port: string };

export interface ProxySettings {
  /** For http:// URLs. */
  http: ProxyEndpoint | undefined;
  /** For https:// URLs. */
  https: ProxyEndpoint | undefined;
  noProxy: NoProxyRule[];
}

/** A proxy variable whose value cannot be used as a proxy. */
export interface UnusableProxy {
  scheme: Scheme;
  env: string;
  /** What is wrong, without the value (it may hold credentials). */
  message: string;
}

export interface ProxyReading {
  /** Undefined when no usable proxy is set. */
  settings: ProxySettings | undefined;
  unusable: UnusableProxy[];
  /** NO_PROXY's rules, which also say which URLs never needed an unusable proxy. */
  noProxy: NoProxyRule[];
  /** NO_PROXY entries that are no host, domain, address or range, and match nothing. */
  ignored: { env: string; entries: string[] } | undefined;
}

/** The set variable of a list (lower case first), or undefined. */
function firstSet(env: Env, names: readonly string[]): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') return { name, value: value.trim() };
  }
  return undefined;
}

/**
 * A proxy value as a URL: `host[:port]` without a scheme means http:// (Go's parseProxy, curl).
 * Node's WHATWG parser: the same one that parses the request URLs it is matched against.
 */
function proxyUrl(value: string): URL | undefined {
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

type ParsedProxy = { ok: true; endpoint: ProxyEndpoint } | { ok: false; message: string };

export function parseProxy(env: string, value: string): ParsedProxy {
  // Node refuses these too (ERR_PROXY_INVALID_CONFIG): they would end up in a request line.
  if (/[\r\n]/.test(value)) return { ok: false, message: 'holds a line break' };
  const url = proxyUrl(value);
  if (url === undefined || url.hostname === '') return { ok: false, message: 'is not a proxy URL (expected http://host:port or https://host:port)' };
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { ok: false, message: `uses ${url.protocol}// (only http:// and https:// proxies are supported)` };
  const credentials = urlCredentials(url.href);
  return {
    ok: true,
    endpoint: { url: `${url.protocol}//${url.host}`, env, credential: credentials && basicCredential(credentials.user, credentials.password) },
  };
}

/** User and password of each proxy variable that holds them, set or shadowed: all are secrets. */
export function proxyCredentials(env: Env): { user: string; password: string }[] {
  const all = [...PROXY_ENV.http, ...PROXY_ENV.https].map((name) => env[name]?.trim() ?? '');
  return all.flatMap((value) => {
    const url = value === '' ? undefined : proxyUrl(value);
    const credentials = url && urlCredentials(url.href);
    return credentials ? [credentials] : [];
  });
}

const IPV4_BITS = 32;
const IPV6_BITS = 128;

function ipFamily(text: string): 'ipv4' | 'ipv6' | undefined {
  const version = process.getBuiltinModule('node:net').isIP(text);
  return version === 4 ? 'ipv4' : version === 6 ? 'ipv6' : undefined;
}

/** A host name or domain as the URL parser writes it (lower case, IDNA to ASCII), or undefined when it is none. */
function asciiDomain(name: string): string | undefined {
  if (!/^[^\s/\\?#@:*[\]%]+$/.test(name)) return undefined;
  const ascii = process.getBuiltinModule('node:url').domainToASCII(name);
  return ascii === '' ? undefined : ascii;
}

/** One NO_PROXY entry (Go's config.init, one loop turn), or undefined when it matches nothing. */
export function parseNoProxyEntry(raw: string): NoProxyRule | undefined {
  const entry = raw.trim().toLowerCase();
  if (entry === '*') return { kind: 'all' };
  const cidr = /^([^/]+)\/(\d{1,3})$/.exec(entry);
  if (cidr) {
    const family = ipFamily(cidr[1]!);
    const prefix = Number(cidr[2]);
    if (family === undefined || prefix > (family === 'ipv4' ? IPV4_BITS : IPV6_BITS)) return undefined;
    return { kind: 'ip', address: cidr[1]!, prefix, family, port: '' };
  }
  // host:port, [v6]:port, [v6]; a bare IPv6 address has more than one colon and no port.
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  const withPort = /^([^:]*):(\d+)$/.exec(entry);
  const host = bracketed?.[1] ?? withPort?.[1] ?? entry;
  const port = bracketed?.[2] ?? withPort?.[2] ?? '';
  if (host === '') return undefined;
  const family = ipFamily(host);
  if (family !== undefined) return { kind: 'ip', address: host, prefix: family === 'ipv4' ? IPV4_BITS : IPV6_BITS, family, port };
  if (bracketed) return undefined;
  // `*.example.com` is `.example.com`; a leading dot means subdomains only.
  const dotted = host.startsWith('*.') ? host.slice(1) : host;
  const exact = !dotted.startsWith('.');
  const name = asciiDomain(exact ? dotted : dotted.slice(1));
  if (name === undefined) return undefined;
  return { kind: 'domain', suffix: `.${name}`, exact, port };
}

/** NO_PROXY's entries: separated by commas (and, as curl and undici accept, white space). */
function parseNoProxy(value: string): { rules: NoProxyRule[]; ignored: string[] } {
  const rules: NoProxyRule[] = [];
  const ignored: string[] = [];
  for (const entry of value.split(/[,\s]+/)) {
    if (entry === '') continue;
    const rule = parseNoProxyEntry(entry);
    if (rule) rules.push(rule);
    else ignored.push(entry);
  }
  return { rules, ignored };
}

/** The proxy variables → plain settings, the unusable ones, the NO_PROXY entries that match nothing. */
export function readProxies(env: Env): ProxyReading {
  const unusable: UnusableProxy[] = [];
  const endpoint = (scheme: Scheme): ProxyEndpoint | undefined => {
    const set = firstSet(env, PROXY_ENV[scheme]);
    if (set === undefined) return undefined;
    const parsed = parseProxy(set.name, set.value);
    if (parsed.ok) return parsed.endpoint;
    unusable.push({ scheme, env: set.name, message: parsed.message });
    return undefined;
  };
  const http = endpoint('http');
  const https = endpoint('https');
  const noProxyVar = firstSet(env, PROXY_ENV.noProxy);
  const { rules, ignored } = parseNoProxy(noProxyVar?.value ?? '');
  return {
    settings: http === undefined && https === undefined ? undefined : { http, https, noProxy: rules },
    unusable,
    noProxy: rules,
    ignored: noProxyVar && ignored.length > 0 ? { env: noProxyVar.name, entries: ignored } : undefined,
  };
}

const DEFAULT_PORTS: Readonly<Record<string, string>> = { 'http:': '80', 'https:': '443' };

function matches(rule: NoProxyRule, host: string, port: string, family: 'ipv4' | 'ipv6' | undefined): boolean {
  if (rule.kind === 'all') return true;
  if (rule.port !== '' && rule.port !== port) return false;
  if (rule.kind === 'domain') return host.endsWith(rule.suffix) || (rule.exact && host === rule.suffix.slice(1));
  if (family === undefined) return false;
  // BlockList compares addresses as numbers, IPv4-mapped IPv6 (::ffff:10.0.0.1) as IPv4, as Go's To4 does.
  const list = new (process.getBuiltinModule('node:net').BlockList)();
  list.addSubnet(rule.address, rule.prefix, rule.family);
  return list.check(host, family);
}

function isLoopback(host: string, family: 'ipv4' | 'ipv6' | undefined): boolean {
  if (host === 'localhost') return true;
  if (family === undefined) return false;
  const list = new (process.getBuiltinModule('node:net').BlockList)();
  list.addSubnet('127.0.0.0', 8, 'ipv4');
  list.addAddress('::1', 'ipv6');
  return list.check(host, family);
}

/**
 * Whether a request to `url` goes through a proxy at all (Go's useProxy): not to localhost or a
 * loopback address (a proxy would reach its own, not ours), not when NO_PROXY matches its host.
 */
export function bypassesProxy(url: URL, rules: readonly NoProxyRule[]): boolean {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port || DEFAULT_PORTS[url.protocol] || '';
  const family = ipFamily(host);
  return isLoopback(host, family) || rules.some((rule) => matches(rule, host, port, family));
}

/** Which proxy variable a request to `url` would use, or undefined when it goes direct whatever is set. */
function proxiedScheme(url: string, rules: readonly NoProxyRule[]): Scheme | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const scheme = parsed.protocol === 'https:' ? 'https' : parsed.protocol === 'http:' ? 'http' : undefined;
  return scheme === undefined || bypassesProxy(parsed, rules) ? undefined : scheme;
}

/** The proxy a request to `url` goes through, or undefined when it goes direct (Go's proxyForURL). */
export function proxyFor(url: string, settings: ProxySettings | undefined): ProxyEndpoint | undefined {
  if (settings === undefined) return undefined;
  const scheme = proxiedScheme(url, settings.noProxy);
  return scheme && settings[scheme];
}

/** The unusable proxy a request to `url` would need, or undefined (see readProxies). */
export function unusableProxyFor(url: string, reading: ProxyReading): UnusableProxy | undefined {
  const scheme = proxiedScheme(url, reading.noProxy);
  return scheme && reading.unusable.find((bad) => bad.scheme === scheme);
}
