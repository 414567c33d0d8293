/**
 * `pyro-run report [DIR] [--json] [--output FILE]`: turns a recording into one HTML page (and
 * prints the endpoint summary), or prints its aggregates as JSON. Whatever is wrong with the
 * input ends as one line on stderr and exit 1: users meet this after a crash or a kill, and a
 * stack trace would hide the one thing they need to read.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Option } from 'commander';
import { DEFAULT_OUTPUT_DIR } from '../config/index.js';
import { aggregateRun } from '../report/aggregate.js';
import { writeReportHtml } from '../report/html.js';
import { type LoadedRun, loadRunSync, RunError } from '../report/load-run.js';
import { formatSummary } from '../report/summary.js';
import { type CommandIo, oneLine, parseSubcommand, subcommand, writeOutput } from './subcommand.js';

export const REPORT_COMMAND = 'pyro-run report';
/** Where recordings go when the app ran without --out (docs/local-mode.md). */
const DEFAULT_DATA_DIR = DEFAULT_OUTPUT_DIR;
export const REPORT_FILE = 'report.html';
const EXIT_FAILED = 1;

/** Relative DIR and FILE resolve from `cwd`. */
export type ReportIo = CommandIo;

interface ReportOptions {
  dir: string | undefined;
  json: boolean;
  output: string | undefined;
  /** Print the endpoint summary before the page's path. */
  summary: boolean;
}

type Parsed = { kind: 'report'; options: ReportOptions } | { kind: 'exit'; code: number };

function parse(args: readonly string[], io: ReportIo): Parsed {
  let options: ReportOptions | undefined;
  const command = subcommand(REPORT_COMMAND, io)
    .description(
      'Turn a pyro-run recording into one self-contained HTML page (endpoints, where their time went, slowest spans, CPU and wall flame graphs) ' +
        'and print the endpoint summary. DIR is a run folder, or a folder of runs (its newest run is used).',
    )
    .argument('[DIR]', `recording or folder of recordings (default: ./${DEFAULT_DATA_DIR})`)
    .option('--json', 'print the aggregates as JSON instead of writing the page')
    .option('--no-summary', "print only the page's path, not the endpoint summary (the app printed it as it ended)")
    .addOption(new Option('-o, --output <FILE>', `where to write the page (or the JSON) (default: <run>/${REPORT_FILE})`))
    .action((dir: string | undefined, flags: { json?: boolean; output?: string; summary?: boolean }) => {
      options = { dir, json: flags.json === true, output: flags.output, summary: flags.summary !== false };
    });
  const code = parseSubcommand(command, args, io);
  if (code !== undefined) return { kind: 'exit', code };
  if (options === undefined) throw new Error('commander finished without running the action');
  return { kind: 'report', options };
}

function report(options: ReportOptions, io: ReportIo): void {
  const dir = path.resolve(io.cwd, options.dir ?? DEFAULT_DATA_DIR);
  let run: LoadedRun;
  try {
    run = loadRunSync(dir);
  } catch (error) {
    // Without DIR, say what was looked for and how a recording comes to be.
    if (options.dir === undefined && error instanceof RunError && (error.code === 'missing' || error.code === 'no-run')) {
      throw new RunError(error.code, `no recording found in ./${DEFAULT_DATA_DIR} (${error.message}); record one with \`pyro-run app.js\` or pass DIR`);
    }
    throw error;
  }
  const aggregates = aggregateRun(run);
  if (options.json) {
    const json = `${JSON.stringify(aggregates)}\n`;
    if (options.output === undefined) io.stdout(json);
    else writeOutput(path.resolve(io.cwd, options.output), (file) => writeFileSync(file, json));
    return;
  }
  const file = options.output === undefined ? path.join(run.dir, REPORT_FILE) : path.resolve(io.cwd, options.output);
  writeOutput(file, (target) => writeReportHtml(aggregates, target));
  io.stdout(`${options.summary ? `${formatSummary(aggregates)}\n` : ''}Report: ${file}\n`);
}

/** Runs `pyro-run report` with the arguments after `report`; returns the exit code. */
export function runReport(args: readonly string[], io: ReportIo): number {
  try {
    const parsed = parse(args, io);
    if (parsed.kind === 'exit') return parsed.code;
    report(parsed.options, io);
    return 0;
  } catch (error) {
    io.stderr(`${REPORT_COMMAND}: ${oneLine(error)}\n`);
    return EXIT_FAILED;
  }
}
