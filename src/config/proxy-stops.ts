import { type ProxySettings, readProxies, unusableProxyFor } from './proxy.js';
import type { Env, Problem } from './types.js';

/** One kind of upload pyro-run's sender would make: what it carries (`profiles`, `spans`…) and where to; no url, no upload. */
export interface Upload<W extends string> {
  what: W;
  url: string | undefined;
}

/**
 * The proxy variables, and the uploads they stop. A proxy that is set but cannot be used stops the
 * uploads that would go through it, with one problem naming the variable, rather than sending them
 * around it: a proxy is usually there because nothing else gets out, or because nothing may (curl
 * refuses such a value too). `chosen` is true when such a problem was reported: a destination
 * stopped that way still counts as one chosen, so local mode does not take over.
 */
export function proxiesFor<W extends string>(
  env: Env,
  uploads: readonly Upload<W>[],
  problems: Problem[],
): { proxy: ProxySettings | undefined; stopped: ReadonlySet<W>; chosen: boolean } {
  const reading = readProxies(env);
  // Only worth a word when there is a proxy to bypass.
  if (reading.ignored && (reading.settings || reading.unusable.length > 0)) {
    const { env: name, entries } = reading.ignored;
    problems.push({
      env: name,
      message: `${name} entries ${entries.map((e) => `"${e}"`).join(', ')} are no host name, domain, IP address or CIDR range`,
      instead: 'they are ignored',
    });
  }
  const stopped = new Set<W>();
  let chosen = false;
  for (const bad of reading.unusable) {
    const lost = uploads.filter(({ url }) => url !== undefined && unusableProxyFor(url, reading) === bad).map(({ what }) => what);
    // Not a problem of ours when no upload would go through it.
    if (lost.length === 0) continue;
    for (const what of lost) stopped.add(what);
    problems.push({ env: bad.env, message: `${bad.env} ${bad.message}`, instead: `${lost.join(' and ')} are not sent (not around the proxy either)` });
    chosen = true;
  }
  return { proxy: reading.settings, stopped, chosen };
}
