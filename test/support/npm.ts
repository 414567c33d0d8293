import { execFileSync } from 'node:child_process';
import path from 'node:path';

/** How long one npm command may take: installs come from the registry. */
export const NPM_TIMEOUT_MS = 240_000;

/** Runs npm in `cwd` with the Node under test (first on PATH), whatever the machine's own node is; returns its stdout. */
export function npm(args: string[], cwd: string): string {
  const env = {
    ...process.env,
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
  return execFileSync('npm', args, { cwd, env, encoding: 'utf8', timeout: NPM_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'pipe'] });
}
