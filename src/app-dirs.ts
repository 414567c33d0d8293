import path from 'node:path';

/**
 * Where the app lives: its entry script's folder first (then the working directory). Its
 * package.json names the service and its node_modules say which instrumentations are worth loading.
 */
export function appDirs(argv: readonly string[], cwd: string): string[] {
  const script = argv[1];
  return script ? [path.dirname(path.resolve(cwd, script)), cwd] : [cwd];
}
