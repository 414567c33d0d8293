import { nodeFs } from './builtins.js';

/** pyro-run's own version, from the package.json of the installed package (dist/src/util → ../../../). */
export function pyroRunVersion(): string {
  try {
    return (JSON.parse(nodeFs().readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
