/**
 * The summary a recording app prints when it ends (src/export/local/local-mode.ts loads this lazily, at exit,
 * where only synchronous work still runs): the endpoint table of its own run.
 */
import { aggregateRun } from './aggregate.js';
import { type LoadedRun, loadRunSync, RunError } from './load-run.js';
import { formatSummary } from './summary.js';

/** The summary of the run in `dir`, without a trailing newline; undefined when nothing was recorded. */
export function exitSummary(dir: string): string | undefined {
  let run: LoadedRun;
  try {
    run = loadRunSync(dir);
  } catch (error) {
    if (error instanceof RunError && error.code === 'empty') return undefined;
    throw error;
  }
  return formatSummary(aggregateRun(run, { trees: false })).trimEnd();
}
