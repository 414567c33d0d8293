import { readFileSync } from 'node:fs';
import type { Env } from '../config/index.js';

/**
 * `ENTRYPOINT ["npx", "pyro-run", "node", "server.js"]`: npm exec is PID 1. `docker stop`'s SIGTERM
 * reaches npm, which signals the `sh -c` it runs pyro-run in; the shell dies of it without passing
 * it on, and when PID 1 exits the kernel SIGKILLs the rest of the namespace: the app's handler
 * never runs, its last window and spans are lost. pyro-run cannot mend that from below, so it says
 * so at start.
 */

/** PID 1's command line as /proc shows it: npm names its process `npm exec …`, or the CLI's script. */
const NPM_EXEC = /^(npm exec|npx)\b|[\\/]np[mx]-cli\.js\u0000/;

/**
 * The warning for a CLI started by `npm exec` / `npx` (`npm_command=exec`) whose PID 1 is that
 * npm (`readInit`: /proc/1/cmdline, read only then); undefined otherwise.
 */
export function npmExecAsInitWarning(env: Env, readInit: () => string | undefined): string | undefined {
  if (env.npm_command !== 'exec') return undefined;
  const init = readInit();
  if (init === undefined || !NPM_EXEC.test(init)) return undefined;
  return (
    'npx (npm exec) is PID 1 here, as with ENTRYPOINT ["npx", "pyro-run", …]: it does not pass SIGTERM on, so `docker stop` kills the app ' +
    "without its shutdown and pyro-run's last profile window and spans; start the installed binary instead " +
    '(ENTRYPOINT ["node_modules/.bin/pyro-run", "node", "server.js"]), or run with an init (docker run --init)'
  );
}

/** PID 1's command line, NUL-separated; undefined where /proc cannot tell (not Linux). */
export function initCommandLine(): string | undefined {
  try {
    return readFileSync('/proc/1/cmdline', 'latin1');
  } catch {
    return undefined;
  }
}
