/**
 * The CLI's half of the flag ↔ env table: flag values become env vars for the child, and bad
 * values are found before anything starts. Pure: the caller passes the environment.
 */
import { readConfig, SETTINGS, type Env, type Problem, type Setting, type SettingKey } from '../config/index.js';

/** Flag values as typed on the command line, keyed like SETTINGS. */
export type FlagValues = Partial<Record<SettingKey, string>>;

const SETTING_ENTRIES = Object.entries(SETTINGS) as [SettingKey, Setting][];

/** `--flush-interval` for PYROSCOPE_FLUSH_INTERVAL_MS: messages name what the user typed. */
const FLAG_BY_ENV: ReadonlyMap<string, string> = new Map(SETTING_ENTRIES.map(([, setting]) => [setting.env, `--${setting.flag}`]));

/** The env vars the given flags set, values verbatim (readConfig trims on its side). */
export function flagsToEnv(flags: FlagValues): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, setting] of SETTING_ENTRIES) {
    const value = flags[key];
    if (value !== undefined) env[setting.env] = value;
  }
  return env;
}

/** The child's environment: the caller's, with each given flag's env var on top. */
export function childEnv(baseEnv: Env, flags: FlagValues): Record<string, string | undefined> {
  return { ...baseEnv, ...flagsToEnv(flags) };
}

const problemKey = (problem: Problem) => `${problem.env}\n${problem.message}`;

function describe(envName: string, message: string): string {
  const flag = FLAG_BY_ENV.get(envName);
  return flag === undefined ? message : `option ${flag}: ${message}`;
}

/**
 * One message per bad flag, e.g. `option --flush-interval: PYROSCOPE_FLUSH_INTERVAL_MS must be a
 * whole number of milliseconds`. Problems already present in `baseEnv` alone are left to the
 * preload (it warns and uses the default); only what the flags set or cause is reported here.
 * Messages come from the settings' parsers, which never echo secret values.
 */
export function flagProblems(flags: FlagValues, baseEnv: Env): string[] {
  const messages: string[] = [];
  const reported = new Set<string>();

  // Each value on its own first: readConfig skips some vars when another one wins
  // (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL over --otlp-protocol), and a flag must never be silently ignored.
  for (const [key, setting] of SETTING_ENTRIES) {
    const value = flags[key];
    if (value === undefined) continue;
    if (value.trim() === '') {
      messages.push(describe(setting.env, `${setting.env} must not be empty`));
      reported.add(setting.env);
      continue;
    }
    const parsed = setting.parse(value);
    if (!parsed.ok) {
      messages.push(describe(setting.env, `${setting.env} ${parsed.message}`));
      reported.add(setting.env);
    }
  }

  // Then the whole configuration, for problems between settings (basic auth needs user and password).
  const flagEnv = flagsToEnv(flags);
  const before = new Set(readConfig(baseEnv).problems.map(problemKey));
  for (const problem of readConfig({ ...baseEnv, ...flagEnv }).problems) {
    if (reported.has(problem.env)) continue;
    if (problem.env in flagEnv || !before.has(problemKey(problem))) {
      messages.push(describe(problem.env, problem.message));
      reported.add(problem.env);
    }
  }
  return messages;
}
