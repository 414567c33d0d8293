/**
 * Node programs that only start the app in another Node process, recognised by their script
 * (`process.argv[1]`, or argv[1] of a process seen from outside): package managers, PM2 and tsx's CLI.
 * The preload gives them no agent; the CLI's signal relay leaves the app's signal to tsx. The user
 * adds more with --skip (isSkipped).
 */
const PACKAGE_MANAGER = /(^|[\\/])(npm|npx|pnpm|pnpx|yarn|yarnpkg|corepack)(-cli)?(\.c?js)?$|[\\/]node_modules[\\/](npm|pnpm|yarn|corepack)[\\/]bin[\\/]/;
/** PM2's CLI, its daemon (which forks the apps), and pm2-runtime (the daemon in the foreground, for containers). */
const PM2 = /(^|[\\/])pm2(-runtime|-dev|-docker)?$|[\\/]pm2[\\/](bin[\\/]pm2(-runtime|-dev|-docker)?|lib[\\/]Daemon\.js)$/;
/** `tsx` on PATH or in node_modules/.bin, or its CLI file run directly. */
const TSX_CLI = /(^|[\\/])tsx$|[\\/]node_modules[\\/]tsx[\\/]dist[\\/]cli\.mjs$/;
/** What tsx's CLI passes on to the app it started. */
const TSX_RELAYED: readonly string[] = ['SIGINT', 'SIGTERM'];

export function isLauncher(script: string | undefined): boolean {
  return script !== undefined && (PACKAGE_MANAGER.test(script) || PM2.test(script) || TSX_CLI.test(script));
}

/**
 * Whether a launcher passes `signal` on to the process it started, with a handshake that a copy
 * sent straight to that process breaks: tsx's CLI waits 30 ms for the app to acknowledge the
 * signal it relayed (an acknowledgement that arrives before tsx got the signal itself is lost),
 * then SIGKILLs the app, in the middle of its final flush.
 */
export function relaysToItsChild(script: string | undefined, signal: string): boolean {
  return script !== undefined && TSX_CLI.test(script) && TSX_RELAYED.includes(signal);
}

/** A script path as a file name ends: what a --skip entry names when it is no package name. */
const SCRIPT_FILE = /\.(c|m)?(j|t)s$/;

/**
 * Whether the user asked for no agent in a process running `script` (--skip, PYRO_RUN_SKIP): an
 * entry that ends like a script file (`.js`, `.cjs`, `.mjs`, `.ts` …) matches the script's path by
 * its end, whole path segments only (`migrate.js`, `scripts/migrate.js`); any other entry is a
 * package name and matches every script under `node_modules/<name>/` (`jest-worker`, `@scope/pkg`).
 */
export function isSkipped(script: string | undefined, entries: readonly string[]): boolean {
  if (script === undefined || entries.length === 0) return false;
  const file = `/${script.replaceAll('\\', '/')}`;
  return entries.some((entry) => {
    const wanted = entry.replaceAll('\\', '/').replace(/^\.?\/+/, '');
    return SCRIPT_FILE.test(wanted) ? file.endsWith(`/${wanted}`) : file.includes(`/node_modules/${wanted}/`);
  });
}
