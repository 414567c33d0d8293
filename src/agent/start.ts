import path from 'node:path';
import { nodeFs } from '../util/builtins.js';
import { type Config, type Env, readConfig, readSetting, SECRET_ENV } from '../config/index.js';
import { appDirs } from '../util/app-dirs.js';
import { basicCredential, urlCredentials } from '../util/basic-auth.js';
import { isLauncher, isSkipped } from '../util/launchers.js';
import { watchLifeline } from './lifeline.js';
import { envUnderPm2 } from '../util/pm2.js';
import { Logger, reason } from '../log.js';
import { createRedactor } from '../util/redact.js';
import { proxyCredentials } from '../config/proxy.js';
import type { Started } from './agent.js';
import { requireBoot, requireWorkerAgent } from './lazy-parts.js';

/** Node versions the OTel SDK and our sampler support (engines of @opentelemetry/sdk-node). */
const MIN_NODE: readonly [number, number] = [22, 15];

export function isSupportedNode(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
}

/** `name` of the nearest package.json above the entry script (or the cwd): the last fallback for service.name. */
export function findPackageName(startDir: string): string | undefined {
  let dir = startDir;
  for (;;) {
    try {
      const name = (JSON.parse(nodeFs().readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name;
      if (typeof name === 'string' && name !== '') return name;
    } catch {
      // No (readable) package.json here: keep walking up.
    }
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * Boots everything inside the app's process. Never throws: each failing part is reported once
 * and the rest goes on (profiling without tracing, tracing without profiling, or nothing).
 */
export function start(env: Env = process.env): Started | undefined {
  // `pyro-run npm start` puts the preload in NODE_OPTIONS, which npm's own Node process reads too.
  const appEnv = envUnderPm2(env);
  // A bad --skip value skips nothing here; readConfig reports it below, in the processes that run the agent.
  if (isLauncher(process.argv[1]) || isSkipped(process.argv[1], readSetting(appEnv, 'skip', []) ?? [])) {
    watchLifeline(env, stopAsOnSigterm, true);
    return undefined;
  }
  const { config, problems } = readConfig(appEnv, { packageName: findPackageName(appDirs(process.argv, process.cwd())[0]!) });
  const log = new Logger(config.logLevel, createRedactor(secretValues(appEnv, config)));
  for (const problem of problems) log.warn(`${problem.message}; ${problem.instead ?? 'using the default'}`);
  watchLifeline(
    env,
    () => {
      log.warn('the pyro-run CLI that started this app is gone (killed): the app stops as on SIGTERM; --orphaned-app keep lets it run on');
      stopAsOnSigterm();
    },
    false,
  );

  if (!isSupportedNode(process.versions.node)) {
    log.warn(`Node.js ${process.versions.node} is not supported (needs ${MIN_NODE.join('.')}+); the app runs without tracing or profiling`);
    return { agent: undefined, config, log, uninstall: () => undefined };
  }
  try {
    // Loaded only once we know there is work to do: the heavy modules live behind this import.
    const { boot } = requireBoot();
    return boot(config, log);
  } catch (error) {
    log.warn(`could not start (${reason(error)}); the app runs without tracing or profiling`);
    return { agent: undefined, config, log, uninstall: () => undefined };
  }
}

/** What a relayed SIGTERM would have done: the app's handlers (or our flush, then death) run. */
function stopAsOnSigterm(): void {
  process.kill(process.pid, 'SIGTERM');
}

/**
 * The main thread's preload loaded in a worker thread (the app's own `--require`, a file worker
 * inheriting `--import`): the worker's own agent, as the worker's preload starts it.
 */
export function startWorker(): void {
  requireWorkerAgent().startWorker();
}

/**
 * Every secret value the logger must never print, from the env as given and as configured: every
 * header of every destination (each signal's own headers over the shared ones, decoded as they are
 * sent), the Pyroscope credentials, and the credentials in every endpoint's and proxy's URL.
 */
export function secretValues(env: Env, config: Config): (string | undefined)[] {
  const secrets = [...SECRET_ENV].map((name) => env[name]);
  const { pyroscope, traces, profilesExport, metrics, logs } = config;
  const headerMaps = [pyroscope.headers, traces.headers, profilesExport.headers, metrics.headers, logs.headers];
  secrets.push(pyroscope.authToken, pyroscope.basicAuthPassword, ...headerMaps.flatMap((headers) => Object.values(headers)));
  // Basic auth goes out as base64 of user:password: a backend that echoes the header echoes that.
  const { basicAuthUser, basicAuthPassword } = pyroscope;
  if (basicAuthUser !== undefined && basicAuthPassword !== undefined) secrets.push(basicCredential(basicAuthUser, basicAuthPassword));
  // A password written into an endpoint URL (https://user:pass@host) is a secret wherever it shows
  // up, not only inside a URL, and so is the Basic credential made of it.
  const inUrls = [pyroscope.serverAddress, traces.endpoint, profilesExport.endpoint, metrics.endpoint, logs.endpoint].map(urlCredentials);
  // The same for a proxy's (http://user:pass@proxy:3128), sent as Proxy-Authorization.
  for (const credentials of [...inUrls, ...proxyCredentials(env)]) {
    if (credentials === undefined || credentials.password === '') continue;
    secrets.push(credentials.password, basicCredential(credentials.user, credentials.password));
  }
  return secrets;
}
