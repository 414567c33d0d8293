/** An environment as process.env holds it. */
type Env = Readonly<Record<string, string | undefined>>;

/**
 * What PM2 tells the app processes it runs. In fork mode their env holds the app's settings
 * already; a cluster-mode worker gets them as one JSON variable, `pm2_env`, which PM2's process
 * container spreads into process.env only after the preload ran (pm2 lib/ProcessContainer.js).
 */
const CLUSTER_ENV = 'pm2_env';
/** Set by PM2 for every process it runs (its process id in PM2's list). */
const PM2_ID = 'pm_id';
/** The app's name in PM2 (`--name`, or the ecosystem file's `name`). */
const PM2_NAME = 'name';

/** `env` as the app will see it once PM2's process container has spread `pm2_env` into it; `env` itself elsewhere. Pure. */
export function envUnderPm2(env: Env): Env {
  const raw = env[CLUSTER_ENV];
  if (raw === undefined) return env;
  let spread: unknown;
  try {
    spread = JSON.parse(raw);
  } catch {
    return env;
  }
  if (typeof spread !== 'object' || spread === null) return env;
  const merged: Record<string, string | undefined> = { ...env };
  // As the container spreads it: every value, as a string (objects become "[object Object]" there,
  // and are of no use here).
  for (const [key, value] of Object.entries(spread)) {
    if (value !== null && value !== undefined && typeof value !== 'object') merged[key] = String(value);
  }
  return merged;
}

/** The app's name in PM2, when PM2 runs this process. Pure. */
export function pm2AppName(env: Env): string | undefined {
  const name = env[PM2_ID] !== undefined ? env[PM2_NAME]?.trim() : undefined;
  return name === '' ? undefined : name;
}
