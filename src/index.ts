/**
 * Programmatic API, for apps that start pyro-run from code instead of the preload:
 *
 *   import { start } from 'pyro-run';
 *   const pyro = start({ serviceName: 'checkout', server: 'http://pyroscope:4040' });
 *   await pyro.shutdown();
 *
 * Options mirror the CLI flags and env vars (see SETTINGS); env vars fill what is not given.
 * ESM apps still need the preload for framework spans of `import`ed modules.
 *
 * Apps that build their own OpenTelemetry SDK add pyro-run's span processor to it:
 *
 *   new NodeSDK({ spanProcessors: [pyroscopeSpanProcessor(), new BatchSpanProcessor({ exporter })] })
 */
import { type Env, SETTINGS, type SettingKey } from './config/index.js';
import { start as startFromEnv } from './agent/start.js';
import { globalState } from './util/global-state.js';

export type { Config, ProfileType, SpanScope } from './config/index.js';
export { SETTINGS } from './config/index.js';
export { type PyroscopeSpanProcessor, pyroscopeSpanProcessor } from './span-link/public-processor.js';

export type StartOptions = Partial<Record<SettingKey, string | number>>;

export interface PyroRun {
  /** Flushes the last profile window and pending spans (bounded by the shutdown timeout) and stops. */
  shutdown(): Promise<void>;
}

/** Options → the env the preload would read, over the process env. Pure. */
export function envFromOptions(options: StartOptions, base: Env): Env {
  const env: Record<string, string | undefined> = { ...base };
  for (const [key, value] of Object.entries(options) as [SettingKey, string | number | undefined][]) {
    if (value !== undefined && key in SETTINGS) env[SETTINGS[key].env] = String(value);
  }
  return env;
}

export function start(options: StartOptions = {}): PyroRun {
  const state = globalState();
  if (state.started) return { shutdown: () => Promise.resolve() };
  state.started = true;
  const started = startFromEnv(envFromOptions(options, process.env));
  return {
    async shutdown() {
      if (!started?.agent) return;
      const timeoutMs = started.config.shutdownTimeoutMs;
      // Our sockets and timers never hold the app open; while the app awaits this flush, this does.
      const hold = setTimeout(() => undefined, timeoutMs + 250);
      try {
        await started.agent.finishAsync(Date.now() + timeoutMs);
      } finally {
        clearTimeout(hold);
        started.uninstall();
      }
    },
  };
}
