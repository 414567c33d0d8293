import type { Config } from './types.js';

/** Default recording folder, relative to the app's working directory. */
export const DEFAULT_OUTPUT_DIR = 'pyro-run-data';

/** What a local recording is made with, as given (PYRO_RUN_OUTPUT_DIR, PYRO_RUN_MAX_RUN_MB, PYRO_RUN_MAX_TOTAL_MB, PYRO_RUN_QUIET). */
export interface RecordingSettings {
  dir: string | undefined;
  runMb: number | undefined;
  totalMb: number | undefined;
  quiet: boolean;
}

/**
 * Local mode: an explicit output dir forces it; otherwise it is the default when no destination
 * is configured at all (no Pyroscope, no OTLP endpoint, no traces exporter chosen; a destination
 * set but wrong counts as one).
 */
export function localMode(given: RecordingSettings, anyDestination: boolean): Config['local'] {
  const { dir } = given;
  if (dir === undefined && anyDestination) return undefined;
  return {
    dir: dir ?? DEFAULT_OUTPUT_DIR,
    capBytes: mbToBytes(given.runMb ?? 200),
    totalCapBytes: mbToBytes(given.totalMb ?? 1024),
    quiet: given.quiet,
    forced: dir !== undefined,
  };
}

const mbToBytes = (mb: number) => Math.round(mb * 1024 * 1024);

/** A byte count in the unit the size settings take, for messages: `1.25 MB`. */
export const megabytes = (bytes: number) => `${Math.round((bytes / (1024 * 1024)) * 100) / 100} MB`;
