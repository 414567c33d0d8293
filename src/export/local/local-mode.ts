import { createRequire } from 'node:module';
import path from 'node:path';
import type { Config } from '../../config/index.js';
import { describeDiskError } from './disk-error.js';
import { LocalRecorder } from './local-recorder.js';
import { type Logger, reason } from '../../log.js';
import { pyroRunVersion } from '../../util/own-version.js';
import type { Manifest } from '../../recording.js';

const require = createRequire(import.meta.url);

/** Writes pyro-run's notices in local mode: the user's main output, so not subject to the log level. */
function notice(text: string): void {
  try {
    process.stderr.write(`pyro-run: ${text}\n`);
  } catch {
    // stderr closed: nothing to tell.
  }
}

/**
 * Opens the run folder and says once where it records. Returns undefined (after one warning) if
 * the folder cannot be created: the app then runs with nothing recorded.
 */
export function openRecording(config: Config, local: NonNullable<Config['local']>, log: Logger): LocalRecorder | undefined {
  const base = path.resolve(local.dir);
  try {
    const recorder = new LocalRecorder(
      config,
      base,
      log,
      { pyroRunVersion: pyroRunVersion(), command: process.argv.slice(1), startedAt: new Date() },
      (dir, manifest) => {
        if (!local.quiet) closingNotice(dir, manifest, log);
      },
    );
    if (!local.quiet)
      notice(`recording to ${path.relative(process.cwd(), recorder.dir) || '.'} (local mode${config.local?.forced ? '' : ': no backend configured'})`);
    return recorder;
  } catch (error) {
    log.warn(`cannot record into ${base}: ${describeDiskError(error)}; the app runs without recording`);
    return undefined;
  }
}

function closingNotice(dir: string, manifest: Manifest, log: Logger): void {
  const shown = path.relative(process.cwd(), dir) || '.';
  const { counts } = manifest;
  notice(`recorded ${counts.windows} profile windows and ${counts.spans} spans in ${shown}`);
  try {
    // Loaded only now: the report code is not needed before the app ends.
    const { exitSummary } = require('../../report/exit-summary.js') as { exitSummary(dir: string): string | undefined };
    const table = exitSummary(dir);
    if (table) process.stderr.write(`${table}\n`);
  } catch (error) {
    log.debug(`no exit summary: ${reason(error)}`);
  }
  notice(`view it: npx pyro-run report ${shown}`);
}
