import type { DiagLogger } from '@opentelemetry/api';
import type { Env } from '../config/index.js';
import type { Logger } from '../log.js';
import { otelApi } from '../vendor.js';

/** Distinct OpenTelemetry errors told as warnings; more only reach debug. */
const MAX_TOLD = 5;
/** How much of an error's text tells two errors apart (the rest may carry ids and values). */
const KEY_LENGTH = 60;
/**
 * Errors that report no failure: a resource read before its late attributes (host.id) arrived
 * logs this (@opentelemetry/resources, ResourceImpl's `attributes`), as the final flush of an app
 * that exits at once does; the spans still go, without those attributes.
 */
const NOT_FAILURES = ['Accessing resource attributes before async attributes settled'];

/**
 * Takes pyro-run's diagnostic logger out, once: called when the app sets one of its own, so the
 * API finds none to replace and the app's logger starts as it would without pyro-run (the API
 * would otherwise have it print "Current logger will be overwritten").
 */
export type DiagRelease = () => void;

/**
 * OpenTelemetry's diagnostics. OTEL_LOG_LEVEL set: to the console at that level, as the NodeSDK
 * does. Unset, OpenTelemetry would stay silent on its own failures (an exporter refused, an
 * instrumentation's hook that threw), so its errors become pyro-run's warnings, each told once,
 * unless the app set a diagnostic logger of its own (`appLogger`, as the API's registry holds it);
 * `quiet`, to pyro-run's debug log only.
 */
export function diagFromEnv(env: Env, log: Logger, appLogger: object | undefined, quiet = false): DiagRelease | undefined {
  const api = otelApi();
  const logLevel = env.OTEL_LOG_LEVEL?.trim().toUpperCase();
  if (logLevel && logLevel in api.DiagLogLevel) {
    api.diag.setLogger(new api.DiagConsoleLogger(), { logLevel: api.DiagLogLevel[logLevel as keyof typeof api.DiagLogLevel] });
    return undefined;
  }
  if (appLogger !== undefined) return undefined;
  api.diag.setLogger(errorsAsWarnings(log, quiet), { logLevel: api.DiagLogLevel.ERROR, suppressOverrideMessage: true });
  let installed = true;
  return () => {
    if (!installed) return;
    installed = false;
    api.diag.disable();
  };
}

function errorsAsWarnings(log: Logger, quiet: boolean): DiagLogger {
  const told = new Set<string>();
  const ignore = () => undefined;
  return {
    error: (message, ...args) => {
      const text = diagText(message, args);
      const key = text.slice(0, KEY_LENGTH);
      if (quiet || told.has(key) || told.size >= MAX_TOLD || NOT_FAILURES.includes(text)) {
        log.debug(`OpenTelemetry: ${text}`);
        return;
      }
      told.add(key);
      log.warn(`OpenTelemetry: ${text}`);
    },
    warn: ignore,
    info: ignore,
    debug: ignore,
    verbose: ignore,
  };
}

/** One line from a diag call's message and arguments: errors by their message, the rest as JSON. */
export function diagText(message: unknown, args: readonly unknown[]): string {
  return [message, ...args]
    .map(partText)
    .filter((part) => part !== '')
    .join(' ');
}

function partText(part: unknown): string {
  if (part instanceof Error) return part.message;
  if (typeof part === 'string') return flattenedErrorMessage(part) ?? part;
  if (part === undefined) return '';
  try {
    return JSON.stringify(part) ?? String(part);
  } catch {
    return String(part);
  }
}

/**
 * The message of an error as @opentelemetry/core's global error handler logs it: flattened to a
 * JSON object of its properties, stack first (core: common/logging-error-handler.ts).
 */
function flattenedErrorMessage(text: string): string | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    return typeof parsed.message === 'string' ? parsed.message : undefined;
  } catch {
    return undefined;
  }
}
