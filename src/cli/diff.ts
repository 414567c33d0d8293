/**
 * `pyro-run diff BEFORE AFTER`: two recordings compared per endpoint and per request, each change
 * judged against the noise, with `--fail-on` rules for CI, and with `--html` a page of the diff
 * with its flame graphs coloured by the change. Exit codes follow diff(1), so a job tells a
 * regression from a broken job: 0 no rule broken, 1 a rule broken (each reason on stderr),
 * 2 trouble — a bad option or rule (before anything is read), a recording that cannot be read, or
 * a page that cannot be written.
 */
import path from 'node:path';
import { Option } from 'commander';
import { compareRunsWithSides } from '../diff/compare-runs.js';
import { writeDiffHtml } from '../diff/diff-html.js';
import { diffPageData } from '../diff/diff-page-data.js';
import { DEFAULT_NOISE, type NoiseRule } from '../diff/metric-change.js';
import { formatDiffJson } from '../diff/render-json.js';
import { breachText, formatDiff } from '../diff/render-text.js';
import { evaluateRules, parseRules, type Rule } from '../diff/rules.js';
import { modelRun } from '../report/aggregate.js';
import { loadRunSync } from '../report/load-run.js';
import { type CommandIo, EXIT_USAGE, oneLine, parseSubcommand, subcommand, usageFailure, writeOutput } from './subcommand.js';

export const DIFF_COMMAND = 'pyro-run diff';
export const EXIT_RULE_BROKEN = 1;
const EXIT_TROUBLE = EXIT_USAGE;
const DEFAULT_TOP = 10;
const MAX_TOP = 1000;
/** Where `--html` without FILE writes the page: beside the after run's recording, as `pyro-run report` writes report.html. */
export const DIFF_PAGE_FILE = 'diff.html';

interface DiffOptions {
  before: string;
  after: string;
  json: boolean;
  /** `--html`: its FILE, or true for the default (DIFF_PAGE_FILE in the after run's folder). */
  html: string | true | undefined;
  rules: Rule[];
  top: number;
  noise: NoiseRule;
}

interface Flags {
  json?: boolean;
  html?: string | true;
  failOn?: string[];
  top?: string;
  minEffect?: string;
}

/** The flags' values, or what is wrong with them (every problem, not the first). */
function options(before: string, after: string, flags: Flags): DiffOptions | { errors: string[] } {
  const { rules, errors } = parseRules(flags.failOn ?? []);
  const top = flags.top === undefined ? DEFAULT_TOP : Number(flags.top);
  if (!Number.isInteger(top) || top < 0 || top > MAX_TOP) errors.push(`--top takes a whole number from 0 to ${MAX_TOP}, not '${flags.top}'`);
  const minEffect = flags.minEffect === undefined ? DEFAULT_NOISE.minEffect * 100 : Number(flags.minEffect.replace(/%$/, ''));
  if (flags.minEffect !== undefined && (flags.minEffect.trim() === '' || !Number.isFinite(minEffect) || minEffect < 0 || minEffect > 1000)) {
    errors.push(`--min-effect takes a percentage from 0 to 1000, not '${flags.minEffect}'`);
  }
  if (errors.length > 0) return { errors };
  return { before, after, json: flags.json === true, html: flags.html, rules, top, noise: { ...DEFAULT_NOISE, minEffect: minEffect / 100 } };
}

function parse(args: readonly string[], io: CommandIo): DiffOptions | number {
  let parsed: DiffOptions | { errors: string[] } | undefined;
  const command = subcommand(DIFF_COMMAND, io)
    .description(
      'Compare two pyro-run recordings per endpoint and per request: requests, CPU and wall time per request, p50 and p95 latency, ' +
        'each change with whether it is beyond the noise (a seeded bootstrap over requests), and for each endpoint that changed, ' +
        'the functions whose self CPU per request changed most. BEFORE and AFTER are run folders, or folders of runs (their newest run is used). ' +
        `Exit: 0, or ${EXIT_RULE_BROKEN} when a --fail-on rule is broken, ${EXIT_TROUBLE} on bad input.`,
    )
    .argument('<BEFORE>', 'the recording to compare against (e.g. the base branch)')
    .argument('<AFTER>', 'the recording of the change')
    .option('--json', 'print the comparison as JSON (docs/diff.md has the shape)')
    .option(
      '--html [FILE]',
      'also write the diff as a self-contained HTML page: the endpoints, and their flame graphs coloured by the change per request ' +
        `(default FILE: ${DIFF_PAGE_FILE} in the after run's folder)`,
    )
    .addOption(
      new Option(
        '--fail-on <rule>',
        `exit ${EXIT_RULE_BROKEN} when an endpoint's change beyond the noise breaks RULE; repeatable; quote it (> is the shell's). ` +
          "RULE: 'cpu-per-request>+10%', 'wall-per-request>+15%', 'p95>+20%', 'p50>+5ms', 'p95<-10%'",
      ).argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]),
    )
    .option('--top <n>', `functions listed per endpoint that changed (default: ${DEFAULT_TOP})`)
    .option('--min-effect <percent>', `smallest change called beyond the noise, in percent of the before value (default: ${DEFAULT_NOISE.minEffect * 100})`)
    .action((before: string, after: string, flags: Flags) => {
      parsed = options(before, after, flags);
    });
  const code = parseSubcommand(command, args, io);
  if (code !== undefined) return code;
  if (parsed === undefined) throw new Error('commander finished without running the action');
  if ('errors' in parsed) return usageFailure(DIFF_COMMAND, parsed.errors, io);
  return parsed;
}

/** A recording by the name the user gave it; an error says which side it was. */
function load(side: 'before' | 'after', dir: string, io: CommandIo) {
  try {
    return modelRun(loadRunSync(path.resolve(io.cwd, dir)));
  } catch (error) {
    throw new Error(`${side}: ${oneLine(error)}`);
  }
}

function diff(options: DiffOptions, io: CommandIo): number {
  const before = load('before', options.before, io);
  const after = load('after', options.after, io);
  if (before.run.dir === after.run.dir) io.stderr(`${DIFF_COMMAND}: before and after are the same run (${before.run.dir})\n`);
  const compared = compareRunsWithSides(before, after, { noise: options.noise, topFunctions: options.top });
  const result = compared.diff;
  const broken = evaluateRules(result, options.rules);
  io.stdout(options.json ? formatDiffJson(result, options.rules, broken) : formatDiff(result));
  for (const breach of broken) io.stderr(`${DIFF_COMMAND}: ${breachText(breach)}\n`);
  if (options.html !== undefined) {
    const file = options.html === true ? path.join(after.run.dir, DIFF_PAGE_FILE) : path.resolve(io.cwd, options.html);
    writeOutput(file, (target) => writeDiffHtml(diffPageData(before, after, compared), target));
    // stdout holds only the JSON when --json asks for it.
    if (options.json) io.stderr(`Diff page: ${file}\n`);
    else io.stdout(`Diff page: ${file}\n`);
  }
  return broken.length > 0 ? EXIT_RULE_BROKEN : 0;
}

/** Runs `pyro-run diff` with the arguments after `diff`; returns the exit code. */
export function runDiff(args: readonly string[], io: CommandIo): number {
  try {
    const parsed = parse(args, io);
    return typeof parsed === 'number' ? parsed : diff(parsed, io);
  } catch (error) {
    io.stderr(`${DIFF_COMMAND}: ${oneLine(error)}\n`);
    return EXIT_TROUBLE;
  }
}
