import path from 'node:path';

/** A path segment that marks installed packages: a script under it is a dependency's, not the app's. */
const INSTALLED = /(^|[\\/])node_modules([\\/]|$)/;

/**
 * Where the app lives, first: its package.json names the service, its source maps are searched for
 * there, and its node_modules say which instrumentations are worth loading (each folder listed is
 * looked in). That is the entry script's folder, then the working directory — unless the entry
 * script is a dependency's own (`node node_modules/next/dist/bin/next start`, `npx next start`,
 * PM2's process container): then the app is the project it is run for, the working directory.
 */
export function appDirs(argv: readonly string[], cwd: string): string[] {
  const script = argv[1];
  if (!script) return [cwd];
  const scriptDir = path.dirname(path.resolve(cwd, script));
  return INSTALLED.test(scriptDir) ? [cwd, scriptDir] : [scriptDir, cwd];
}
