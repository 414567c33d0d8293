/**
 * Configuration: the flag ↔ env table (settings.ts) and the env vars read beside it (env-vars.ts), the pure parsers (parse.ts, labels.ts), every
 * signal's route decided in one place (signal-routes.ts, by the OTel exporter spec's rules in
 * otlp-env.ts), and readConfig(env), which assembles them. All of it pure: env comes in.
 */
export * from './types.js';
export { DEFAULT_PROFILES_URL, OTLP_LOGS_PATH, OTLP_METRICS_PATH, OTLP_PROFILES_PATH } from './otlp-spec.js';
export { type Parsed, parseHeaders, parseResourceAttributes, parseSkipList, parseUrl } from './parse.js';
export { parseLabels } from './labels.js';
export { type Setting, type SettingKey, SETTINGS } from './settings.js';
export { ENV, readSetting, SECRET_ENV, settingByFlag } from './env-vars.js';
export { readOtlpTlsFiles } from './otlp-env.js';
export { DEFAULT_OUTPUT_DIR, megabytes } from './local-mode.js';
export { type SignalRoutes, signalRoutes } from './signal-routes.js';
export { readConfig } from './read-config.js';
