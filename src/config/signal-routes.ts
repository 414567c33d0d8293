import { localMode, type RecordingSettings } from './local-mode.js';
import { readOtlpSignal, readSharedOtlp, type SharedOtlp, signalProtocol, spanSettingsGiven } from './otlp-env.js';
import type { OtlpProtocol } from './otlp-spec.js';
import { exporterList } from './parse.js';
import type { ProxySettings } from './proxy.js';
import { proxiesFor } from './proxy-stops.js';
import { ENV, readSetting } from './env-vars.js';
import { SETTINGS } from './settings.js';
import {
  type Config,
  type Env,
  LOG_EXPORTERS,
  type LogExporterName,
  METRIC_EXPORTERS,
  type MetricExporterName,
  NO_EXPORTER,
  type Problem,
  type ProfilesRoute,
  type SignalRoute,
  type TracesRoute,
} from './types.js';

/**
 * Where every signal goes, decided here and nowhere else: for spans, profiles, metrics and logs,
 * which exporters, the OTLP endpoint, headers, protocol, compression, TLS files and timeout (by the
 * OTel exporter spec, otlp-env.ts), and whose code sends it (`sender`); whether anything is sent
 * at all (local mode records instead); and which uploads a proxy that cannot be used stops.
 * Downstream reads the routes and decides none of this again.
 */
export interface SignalRoutes {
  traces: TracesRoute & { settingsGiven: string[] };
  profiles: ProfilesRoute;
  /** Pyroscope's base URL, where profiles go when their exporter is pyroscope; undefined: unset, wrong, or behind a proxy that cannot be used. */
  pyroscopeServer: string | undefined;
  metrics: SignalRoute<MetricExporterName>;
  logs: SignalRoute<LogExporterName>;
  proxy: ProxySettings | undefined;
  local: Config['local'];
}

/** What the routes take that the rest of the configuration reads too: each read once, by readConfig. */
export interface RouteSettings {
  /** PYRO_RUN_UPLOAD_TIMEOUT_MS (or its default): an OTLP upload's timeout where no OTLP variable sets one. */
  uploadTimeoutMs: number;
  recording: RecordingSettings;
}

/**
 * Whether pyro-run's sender would carry a signal's OTLP export: OTLP/HTTP goes through it, so that
 * the final flush takes what is left at exit; OTLP/gRPC is the SDK's exporter's, which reads its
 * own OTEL_EXPORTER_OTLP_* variables.
 */
const overOurOtlp = (exporters: readonly string[], protocol: OtlpProtocol) => exporters.includes('otlp') && protocol !== 'grpc';

/** env → every signal's route. Pure: each bad value a Problem, its default in its place, as in readConfig. */
export function signalRoutes(env: Env, given: RouteSettings, problems: Problem[]): SignalRoutes {
  const sharedProtocol = readSetting(env, 'otlpProtocol', problems);
  const tracesProtocol = signalProtocol(env, 'TRACES', sharedProtocol, problems);
  const shared = readSharedOtlp(env, { protocol: sharedProtocol, spansOverGrpc: tracesProtocol === 'grpc', uploadTimeoutMs: given.uploadTimeoutMs }, problems);

  const explicitSpanExporters = readSetting(env, 'tracesExporter', problems);
  // Spans' TLS files are read whoever sends them: settingsGiven, which tells an app's own SDK the
  // span settings in effect, leaves out those with a problem.
  const traces = readOtlpSignal(env, 'TRACES', tracesProtocol, shared, true, problems);
  const settingsGiven = spanSettingsGiven(env, problems);
  // A destination that is set but wrong is a remote set-up with a mistake: that signal is not sent,
  // and nothing is recorded in the app's folder instead.
  const badTraces =
    traces.endpoint === undefined ? problemsWith(problems, [SETTINGS.otlpEndpoint.env, SETTINGS.otlpTracesEndpoint.env], 'spans are not sent') : [];
  const spanExporters = badTraces.length > 0 && explicitSpanExporters === undefined ? [] : (explicitSpanExporters ?? ['otlp']);

  const server = readSetting(env, 'server', problems);
  const badServer = problemsWith(problems, [SETTINGS.server.env], 'profiles are not sent');
  const profilesExporter = readSetting(env, 'profilesExporter', problems) ?? 'pyroscope';
  // No protocol variable of their own: pyro-run sends profiles over OTLP/HTTP as protobuf only.
  const { protocol: _protobuf, ...profiles } = readOtlpSignal(env, 'PROFILES', 'http/protobuf', shared, profilesExporter === 'otlp', problems);

  const metrics = signalExport(env, 'METRICS', METRIC_EXPORTERS, shared, problems);
  const logs = signalExport(env, 'LOGS', LOG_EXPORTERS, shared, problems);

  const proxies = proxiesFor(
    env,
    [
      { what: 'profiles', url: profilesExporter === 'otlp' ? profiles.endpoint : server },
      { what: 'spans', url: overOurOtlp(spanExporters, tracesProtocol) ? traces.endpoint : undefined },
      ...(
        [
          ['metrics', metrics],
          ['logs', logs],
        ] as const
      ).map(([what, signal]) => ({ what, url: overOurOtlp(signal.exporters, signal.protocol) ? signal.endpoint : undefined })),
    ],
    problems,
  );
  const { stopped } = proxies;
  const pyroscopeServer = profilesExporter === 'pyroscope' && stopped.has('profiles') ? undefined : server;
  const profilesEndpoint = profilesExporter === 'otlp' && stopped.has('profiles') ? undefined : profiles.endpoint;
  const tracesExporters = stopped.has('spans') ? spanExporters.filter((name) => name !== 'otlp') : spanExporters;

  const chosen = explicitSpanExporters !== undefined || profilesExporter === 'otlp' || badServer.length > 0 || badTraces.length > 0 || proxies.chosen;
  const local = localMode(given.recording, pyroscopeServer !== undefined || traces.endpoint !== undefined || chosen);
  const recording = local !== undefined;

  return {
    traces: { ...traces, exporters: tracesExporters, settingsGiven, ...tracesSender(tracesExporters, tracesProtocol, recording) },
    profiles: profilesRoute({ ...profiles, exporter: profilesExporter, endpoint: profilesEndpoint }, pyroscopeServer, recording),
    pyroscopeServer,
    metrics: metricsOrLogsRoute(metrics, stopped.has('metrics'), recording),
    logs: metricsOrLogsRoute(logs, stopped.has('logs'), recording),
    proxy: proxies.proxy,
    local,
  };
}

/** Who sends spans over OTLP: nobody in local mode, which records them whatever the exporters listed. */
function tracesSender(exporters: readonly string[], protocol: OtlpProtocol, recording: boolean): Pick<TracesRoute, 'sender'> {
  if (recording || !exporters.includes('otlp')) return {};
  return { sender: overOurOtlp(exporters, protocol) ? 'pyro-run' : 'otel-sdk' };
}

/** The problems `names` have, each now saying what follows from it. */
function problemsWith(problems: Problem[], names: readonly string[], instead: string): Problem[] {
  const found = problems.filter((problem) => names.includes(problem.env));
  for (const problem of found) problem.instead = instead;
  return found;
}

/** The exporters OTEL_<SIGNAL>S_EXPORTER lists as the NodeSDK reads it: an unknown name is a problem and left out; `none` anywhere lists none. */
function listedExporters<E extends string>(env: Env, name: string, known: readonly E[], problems: Problem[]): E[] {
  const names = exporterList(env[name]);
  const unknown = names.filter((listed) => listed !== NO_EXPORTER && !(known as readonly string[]).includes(listed));
  if (unknown.length > 0)
    problems.push({
      env: name,
      message: `${name} lists ${unknown.map((listed) => `"${listed}"`).join(', ')}, not one of ${known.join(', ')}, ${NO_EXPORTER}`,
      instead: 'ignored',
    });
  return names.includes(NO_EXPORTER) ? [] : known.filter((listed) => names.includes(listed));
}

/** Metrics' or logs' exporters and OTLP export; TLS files only where pyro-run's sender would carry it (the gRPC exporter reads its own). */
function signalExport<E extends string>(env: Env, signal: 'METRICS' | 'LOGS', known: readonly E[], shared: SharedOtlp, problems: Problem[]) {
  const exporters = listedExporters(env, signal === 'METRICS' ? ENV.metricsExporter : ENV.logsExporter, known, problems);
  const protocol = signalProtocol(env, signal, shared.protocol, problems);
  return { exporters, ...readOtlpSignal(env, signal, protocol, shared, overOurOtlp(exporters, protocol), problems) };
}

/**
 * Who sends metrics or logs over OTLP: pyro-run's sender, for OTLP/HTTP in remote mode; the
 * NodeSDK's exporter otherwise: over gRPC, and in local mode, which records neither. Behind a proxy
 * that cannot be used the endpoint is gone, and pyro-run sends nothing.
 */
function metricsOrLogsRoute<E extends string>(signal: Omit<SignalRoute<E>, 'sender'>, stopped: boolean, recording: boolean): SignalRoute<E> {
  const endpoint = stopped ? undefined : signal.endpoint;
  const route = { ...signal, endpoint };
  if (!(signal.exporters as readonly string[]).includes('otlp')) return route;
  if (recording || signal.protocol === 'grpc') return { ...route, sender: 'otel-sdk' };
  return endpoint === undefined ? route : { ...route, endpoint, sender: 'pyro-run' };
}

/** Profiles always go through pyro-run's sender (to Pyroscope's /ingest or over OTLP/HTTP), when they are sent at all: not in local mode, which records them. */
function profilesRoute(route: Omit<ProfilesRoute, 'sender'>, pyroscopeServer: string | undefined, recording: boolean): ProfilesRoute {
  const { endpoint } = route;
  const destination = route.exporter === 'otlp' ? endpoint : pyroscopeServer;
  // The OTLP endpoint is always set for the pyroscope exporter (the default): checked for its type.
  return recording || destination === undefined || endpoint === undefined ? route : { ...route, endpoint, sender: 'pyro-run' };
}
