import { pm2AppName } from '../util/pm2.js';
import { readLabels } from './labels.js';
import { exportersAskedFor, parseResourceAttributes, switchedOn, text } from './parse.js';
import { readBatch, readMetricsCollection } from './pipelines.js';
import { ENV, readSetting, readVar } from './env-vars.js';
import { SETTINGS, type SettingKey } from './settings.js';
import { signalRoutes } from './signal-routes.js';
import type { Config, Env, Facts, Problem } from './types.js';

/**
 * env → Config, which the CLI (to reject problems, exit 2) and the preload (one warning each, the
 * default in its place, so the app always runs) both read. Pure: the caller passes env and facts,
 * nothing global is read. The object is complete when built: each signal's route comes decided
 * from signalRoutes.
 */
export function readConfig(env: Env, facts: Facts = {}): { config: Config; problems: Problem[] } {
  const problems: Problem[] = [];
  const get = <K extends SettingKey>(key: K) => readSetting(env, key, problems);

  const uploadTimeoutMs = get('uploadTimeout') ?? 10_000;
  const quiet = get('quiet') ?? false;
  const routes = signalRoutes(
    env,
    { uploadTimeoutMs, recording: { dir: get('out'), runMb: get('maxRunSize'), totalMb: get('maxTotalSize'), quiet } },
    problems,
  );
  const { local } = routes;
  const resourceAttributes = parseResourceAttributes(env[ENV.resourceAttributes]);
  const otlpProfiles = routes.profiles.exporter === 'otlp';

  const config: Config = {
    serviceName: serviceName(env, resourceAttributes, facts, problems),
    pyroscope: {
      serverAddress: routes.pyroscopeServer,
      ...pyroscopeAuth(env, problems),
      tenantId: get('tenantId'),
      headers: get('pyroscopeHeaders') ?? {},
      labels: readLabels(env, SETTINGS.labels.env, problems),
      uploadTimeoutMs,
      spoolDir: get('spoolDir'),
    },
    tlsSkipVerify: get('insecureSkipTlsVerify') ?? false,
    proxy: routes.proxy,
    profiles: get('profiles') ?? ['cpu', 'wall'],
    workers: get('workers') ?? true,
    quiet,
    spanScope: get('spanScope') ?? 'root',
    local,
    sourceMaps: get('sourceMaps') ?? true,
    // In local files trace_id costs nothing; sent to a Pyroscope before 2.1 it becomes a series label.
    // Over OTLP a sample's link carries its trace ID, whatever the setting.
    traceIdLabel: (otlpProfiles && local === undefined) || (get('traceIdLabel') ?? local !== undefined),
    flushIntervalMs: get('flushInterval') ?? 15_000,
    samplingIntervalMicros: get('samplingInterval') ?? 10_000,
    maxSpanNames: get('maxSpanNames') ?? 100,
    blockThresholdMs: get('blockThreshold') ?? 100,
    heap: { intervalBytes: get('heapSamplingInterval') ?? 524_288, stackDepth: get('heapStackDepth') ?? 64 },
    shutdownTimeoutMs: get('shutdownTimeout') ?? 5_000,
    orphanedApp: get('orphanedApp') ?? 'stop',
    skip: get('skip') ?? [],
    logLevel: get('logLevel') ?? 'warn',
    traces: { ...routes.traces, batch: readBatch(env, 'spans', problems), dbStatements: get('dbStatements') ?? 'sanitized' },
    resourceAttributes,
    profilesExport: routes.profiles,
    sdkDisabled: switchedOn(env[ENV.sdkDisabled]),
    metricsRequested: exportersAskedFor(env[ENV.metricsExporter]),
    logsRequested: exportersAskedFor(env[ENV.logsExporter]),
    metrics: { ...routes.metrics, ...readMetricsCollection(env, problems) },
    logs: { ...routes.logs, batch: readBatch(env, 'logs', problems) },
  };
  return { config, problems };
}

/** service.name: OTEL_SERVICE_NAME, else the resource's, else Pyroscope's application name, else PM2's, else package.json's. */
function serviceName(env: Env, resourceAttributes: Record<string, string>, facts: Facts, problems: Problem[]): string {
  return (
    readSetting(env, 'serviceName', problems) ??
    (resourceAttributes['service.name'] || undefined) ??
    readVar(env, ENV.applicationName, text, problems) ??
    pm2AppName(env) ??
    facts.packageName ??
    // OTel's own default is unknown_service:node, but ':' is not allowed in a Pyroscope service
    // name, and spans and profiles must carry the same one.
    'unknown_service'
  );
}

/** Pyroscope's credentials: a bearer token, else basic auth, which needs both its halves. */
function pyroscopeAuth(env: Env, problems: Problem[]): Pick<Config['pyroscope'], 'authToken' | 'basicAuthUser' | 'basicAuthPassword'> {
  const { basicAuthUser: user, basicAuthPassword: password, authToken: token } = SETTINGS;
  const basicAuthUser = readSetting(env, 'basicAuthUser', problems);
  const basicAuthPassword = readSetting(env, 'basicAuthPassword', problems);
  if ((basicAuthUser === undefined) !== (basicAuthPassword === undefined)) {
    const missing = basicAuthUser === undefined ? user.env : password.env;
    problems.push({ env: missing, message: `basic auth needs both ${user.env} and ${password.env}; ${missing} is missing` });
  }
  const authToken = readSetting(env, 'authToken', problems);
  const hasBasic = basicAuthUser !== undefined && basicAuthPassword !== undefined;
  if (authToken !== undefined && hasBasic) problems.push({ env: token.env, message: `${token.env} and basic auth are both set; the bearer token is used` });
  const basic = hasBasic && authToken === undefined;
  return { authToken, basicAuthUser: basic ? basicAuthUser : undefined, basicAuthPassword: basic ? basicAuthPassword : undefined };
}
