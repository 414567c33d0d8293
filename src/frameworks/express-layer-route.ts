/**
 * The routes @opentelemetry/instrumentation-express reads from the layer paths it stores on a
 * request (its dist/utils.cjs, `getConstructedRoute` and `getActualMatchedRoute`), computed as it
 * does — same value for every store — in one pass over the store, without the arrays, closures and
 * regular expressions those two make on every layer of every request (and the second computes the
 * first again). test/unit/express-layer-route.test.ts holds them to the package's functions.
 */

/** express 5's catch-all mount, `/{*splat}`, as the package tells it. */
const SPLAT = /^\/\{[*][^}]*\}$/;

/**
 * Mount paths that add nothing to a route: `/`, `/*`, and a SPLAT (tested without the regular
 * expression for a string). Anything else in the store (only strings are, unless another copy of
 * the instrumentation wrote there) is judged as the package's filter judges it.
 */
function addsNothing(path: unknown): boolean {
  if (typeof path !== 'string') return SPLAT.test(path as string);
  if (path === '/' || path === '/*') return true;
  return (
    path.length >= 4 && path.charCodeAt(0) === 0x2f && path.charCodeAt(1) === 0x7b && path.charCodeAt(2) === 0x2a && path.indexOf('}', 3) === path.length - 1
  );
}

/** Runs of `/` as one (the package's `.replace(/\/{2,}/g, "/")`), only where there is a run. */
function oneSlash(route: string): string {
  return route.includes('//') ? route.replace(/\/{2,}/g, '/') : route;
}

/** The route the stored layer paths make: the meaningful ones joined (the package's special case of `*` alone joins to the same). */
export function constructedRoute(store: readonly unknown[]): string {
  let joined = '';
  for (let i = 0; i < store.length; i++) {
    const path = store[i];
    if (addsNothing(path)) continue;
    // As Array#join writes each: null and undefined as nothing.
    if (path !== undefined && path !== null) joined += String(path);
  }
  return oneSlash(joined);
}

/**
 * The route the request matched (the span's `http.route`), given the constructed route: none
 * before any layer path; `/` for a request to `/` through `/` mounts only; a constructed route
 * that is a pattern as it is; otherwise the route with a leading `/` when the request's URL starts
 * with it or it has parameters. An `originalUrl` that is no string matches nothing (the package's
 * function would throw there).
 */
export function matchedRoute(store: readonly unknown[], constructed: string, originalUrl: unknown): string | undefined {
  if (store.length === 0) return undefined;
  let allRoot = true;
  for (let i = 0; i < store.length && allRoot; i++) allRoot = store[i] === '/';
  if (allRoot) return originalUrl === '/' ? '/' : undefined;
  if (constructed === '*') return constructed;
  if (constructed.includes('/') && (constructed.includes(',') || constructed.includes('\\') || constructed.includes('*') || constructed.includes('[')))
    return constructed;
  const normalized = constructed.startsWith('/') ? constructed : `/${constructed}`;
  const pattern = normalized.includes(':') || normalized.includes('*');
  if (pattern) return normalized;
  return typeof originalUrl === 'string' && originalUrl.startsWith(normalized) ? normalized : undefined;
}
