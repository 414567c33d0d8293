import { nodeFs } from '../util/builtins.js';

/** The package a module file belongs to, from its path: `…/node_modules/<package>/…`. */
const PACKAGE_OF_PATH = /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)(?=[\\/])/g;

/**
 * The versions of `packages` the app has already loaded through `require` (package → version, the
 * first copy found), read from the package.json beside their modules in the require cache: what an
 * app's SDK set up with `--require` before the preload runs on. Only the cache's paths are
 * scanned; one package.json is read per package found.
 */
export function loadedVersions(packages: readonly string[], cachedPaths: Iterable<string>, readVersion = packageVersion): Map<string, string> {
  const wanted = new Set(packages);
  const found = new Map<string, string>();
  for (const path of cachedPaths) {
    for (const match of path.matchAll(PACKAGE_OF_PATH)) {
      const name = (match[1] ?? '').replaceAll('\\', '/');
      if (!wanted.has(name) || found.has(name)) continue;
      const version = readVersion(path.slice(0, match.index + match[0].length + 1));
      if (version !== undefined) found.set(name, version);
    }
  }
  return found;
}

/** The paths of the modules loaded through `require` so far. */
export function requiredPaths(): string[] {
  const { createRequire } = process.getBuiltinModule('node:module');
  return Object.keys(createRequire(`${process.cwd()}/`).cache);
}

function packageVersion(packageDir: string): string | undefined {
  try {
    const version = (JSON.parse(nodeFs().readFileSync(`${packageDir}package.json`, 'utf8')) as { version?: unknown }).version;
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}
