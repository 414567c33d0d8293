/**
 * `pyro-run [options] [--] <command> [args...]`: parse, validate, then hand over to the app.
 * parseCommandLine is pure (args, env and version in; a request out) so every usage error is
 * table-tested; main() owns the side effects. A subcommand (`report`, `diff`) is an entry of
 * SUBCOMMANDS: its arguments go to its own parser, loaded only when it runs.
 */
import { pyroRunVersion } from '../util/own-version.js';
import { Command, CommanderError, Help, Option } from 'commander';
import { readConfig, SETTINGS, type Env, type Setting, type SettingKey } from '../config/index.js';
import { buildLaunch, classifyCommand, registerPath } from './argv.js';
import { childEnv, flagProblems, type FlagValues } from './flags.js';
import { fileFacts, targetNodeVersion } from './node-version.js';
import { mirrorExit } from './signals.js';
import { run } from './spawn.js';
import { initCommandLine, npmExecAsInitWarning } from './init-launcher.js';

export const PROGRAM_NAME = 'pyro-run';
/** Bad input: nothing was started. The usual code for usage errors (BSD sysexits aside, shells and getopt tools use 2). */
export const EXIT_USAGE = 2;
/** pyro-run itself failed before the app could start. */
const EXIT_INTERNAL = 1;
/**
 * How much longer than its shutdown deadline an app under a launcher may take to end: the
 * deadline bounds its flush, not the exit that follows, nor a slow start of the flush.
 */
export const LAUNCHED_APP_SLACK_MS = 1_000;

const USAGE = '[options] [--] <script | node [node-args] script | command> [args...]';
const DESCRIPTION =
  'Run a Node.js app with OpenTelemetry tracing and CPU/wall profiles whose samples carry the span that ran them. ' +
  'Options go before the command; the command and everything after it reach the app unchanged. ' +
  'Each option sets the environment variable shown, which works on its own too.';
const EXAMPLES = `
How the command runs:
  app.js (.js .mjs .cjs .ts .mts .cts)  this Node, preload required first
  node [node-args] app.js               that node, preload required first
  any other command (npm start, tsx)    as is, preload added to NODE_OPTIONS

Examples:
  ${PROGRAM_NAME} app.js
  ${PROGRAM_NAME} --server http://localhost:4040 -- node --enable-source-maps app.js
  ${PROGRAM_NAME} --service-name checkout --labels region=eu npm start
`;
/** Help width when stdout is not a terminal (piped to less, grep, a file). */
const DEFAULT_HELP_WIDTH = 80;
const HELP_HINT = `Try '${PROGRAM_NAME} --help' for more information.`;

/** Print this and exit with `code` (help, version, usage errors). */
export interface ExitRequest {
  kind: 'exit';
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `command` (first word and its arguments, verbatim) with the flags' env. */
export interface RunRequest {
  kind: 'run';
  flags: FlagValues;
  command: string[];
}

/** The subcommands, each with its own parser (src/cli/<name>.ts), and their line in --help. */
const SUBCOMMANDS = {
  report: 'turn a recording (default: ./pyro-run-data) into an HTML report; see pyro-run report --help',
  diff: 'compare two recordings per endpoint and request, changes judged against the noise; see pyro-run diff --help',
} as const;
type SubcommandName = keyof typeof SUBCOMMANDS;

/** `pyro-run report …`, `pyro-run diff …`: the arguments after the subcommand's name, for its own parser. */
export interface SubcommandRequest {
  kind: 'subcommand';
  name: SubcommandName;
  args: string[];
}

export type CliRequest = RunRequest | SubcommandRequest | ExitRequest;

export interface ParseContext {
  /** The environment the app would inherit: flag problems are judged against it. */
  env: Env;
  version: string;
  /** Columns for --help; DEFAULT_HELP_WIDTH when undefined. */
  helpWidth?: number | undefined;
}

export function usageLines(): string {
  return `Usage: ${PROGRAM_NAME} ${USAGE}\n${HELP_HINT}\n`;
}

/** `pyro-run: <message>` for each message, then the usage: exit 2, nothing started. */
export function usageError(messages: readonly string[]): ExitRequest {
  const lines = messages.map((message) => `${PROGRAM_NAME}: ${message}\n`).join('');
  return { kind: 'exit', code: EXIT_USAGE, stdout: '', stderr: lines + usageLines() };
}

/** "(default: 15000)" and "(env: NAME)" must not be split by help wrapping; this stands in for their spaces meanwhile. */
const GLUE = '\uE000';
const KEEP_TOGETHER = /\((?:default|env): [^)]*\)/g;

function optionDescription(setting: Setting): string {
  const defaultText = setting.defaultText === undefined ? '' : ` (default: ${setting.defaultText})`;
  return `${setting.description}${defaultText} (env: ${setting.env})`;
}

function createProgram(context: ParseContext, output: { stdout: string; stderr: string }, onRun: (request: RunRequest | SubcommandRequest) => void): Command {
  const keyByAttribute = new Map<string, SettingKey>();
  const program = new Command(PROGRAM_NAME)
    .usage(USAGE)
    .description(DESCRIPTION)
    .version(context.version, '-V, --version', 'print the pyro-run version and exit')
    .helpOption('-h, --help', 'print this help and exit')
    .argument('[command...]', 'the app to run and its arguments')
    // Our options only before the command: `pyro-run node app.js --server x` passes --server to the app.
    .enablePositionalOptions()
    .passThroughOptions()
    .exitOverride()
    .configureOutput({
      writeOut: (text) => void (output.stdout += text),
      writeErr: (text) => void (output.stderr += text),
      // Errors are reworded and followed by the usage in parseCommandLine.
      outputError: () => undefined,
      getOutHelpWidth: () => context.helpWidth ?? DEFAULT_HELP_WIDTH,
      getErrHelpWidth: () => context.helpWidth ?? DEFAULT_HELP_WIDTH,
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    })
    .configureHelp({
      boxWrap(this: Help, text: string, width: number) {
        const glued = text.replace(KEEP_TOGETHER, (group) => group.replaceAll(' ', GLUE));
        return Help.prototype.boxWrap.call(this, glued, width).replaceAll(GLUE, ' ');
      },
    })
    .addHelpText('after', EXAMPLES)
    .action((command: string[], options: Record<string, string | true | undefined>) => {
      const flags: FlagValues = {};
      for (const [attribute, value] of Object.entries(options)) {
        const key = keyByAttribute.get(attribute);
        // A switch (`--quiet`) arrives as true and sets its env var to `on`.
        if (key !== undefined && value !== undefined) flags[key] = value === true ? 'on' : value;
      }
      onRun({ kind: 'run', flags, command });
    });
  // Everything after a subcommand's name goes to its parser verbatim, --help included.
  program.helpCommand(false);
  for (const [name, description] of Object.entries(SUBCOMMANDS) as [SubcommandName, string][]) {
    program
      .command(name)
      .description(description)
      .argument('[args...]')
      .helpOption(false)
      .allowUnknownOption()
      .passThroughOptions()
      .action((args: string[]) => onRun({ kind: 'subcommand', name, args }));
  }

  for (const [key, setting] of Object.entries(SETTINGS) as [SettingKey, Setting][]) {
    // No .env(): commander would read process.env itself; the child inherits env anyway, and
    // only flags are ours to validate.
    const option = new Option(setting.arg ? `--${setting.flag} ${setting.arg}` : `--${setting.flag}`, optionDescription(setting));
    keyByAttribute.set(option.attributeName(), key);
    program.addOption(option);
  }
  return program;
}

/** Commander's verdict on args: a run request, help/version output to print, or its error. */
function commanderParse(args: readonly string[], context: ParseContext): RunRequest | SubcommandRequest | ExitRequest | CommanderError {
  const output = { stdout: '', stderr: '' };
  let request: RunRequest | SubcommandRequest | undefined;
  const program = createProgram(context, output, (parsed) => (request = parsed));
  try {
    program.parse([...args], { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    return error.exitCode === 0 ? { kind: 'exit', code: 0, ...output } : error;
  }
  if (request === undefined) throw new Error('commander finished without running the action');
  return request;
}

/**
 * Commander's error text in our words, on one line. An unknown `--flag=value` is shown without
 * its value (it may be a secret), with the suggestion commander makes for the bare flag.
 */
function commanderMessage(error: CommanderError, context: ParseContext): string {
  const message = error.message.replace(/^error: /, '').replaceAll('\n', ' ');
  const missing = /^option '(\S+) ([^']*)' argument missing$/.exec(message);
  if (missing) return `option ${missing[1]}: missing value ${missing[2]}`;
  const unknown = error.code === 'commander.unknownOption' ? /^unknown option '([^=']*)=/.exec(message) : null;
  if (!unknown) return message;
  const flag = unknown[1] as string;
  const bare = commanderParse([flag], context);
  return bare instanceof CommanderError ? commanderMessage(bare, context) : `unknown option '${flag}'`;
}

/**
 * args (without node and script) → what to do. Usage errors and --help/--version come back as
 * `exit` with the text to print; `run` carries validated flags and the command, verbatim.
 */
export function parseCommandLine(args: readonly string[], context: ParseContext): CliRequest {
  const parsed = commanderParse(args, context);
  if (parsed instanceof CommanderError) return usageError([commanderMessage(parsed, context)]);
  if (parsed.kind === 'exit' || parsed.kind === 'subcommand') return parsed;
  const problems = flagProblems(parsed.flags, context.env);
  if (problems.length > 0) return usageError(problems);
  if (parsed.command.length === 0) return usageError(['no command given']);
  return parsed;
}

function exitWith(request: ExitRequest): void {
  process.stdout.write(request.stdout);
  process.stderr.write(request.stderr);
  process.exitCode = request.code;
}

async function runCommand(flags: FlagValues, command: string[]): Promise<void> {
  const kind = classifyCommand(command, fileFacts);
  if (kind === 'missing-script') {
    exitWith(usageError([`script not found: ${command[0]}`]));
    return;
  }
  const env = childEnv(process.env, flags);
  const asInit = npmExecAsInitWarning(process.env, initCommandLine);
  if (asInit !== undefined) process.stderr.write(`${PROGRAM_NAME}: warning: ${asInit}\n`);
  const launch = buildLaunch({
    command,
    kind,
    registerPath: registerPath(),
    execPath: process.execPath,
    nodeVersion: targetNodeVersion(kind, command, env),
    env,
  });
  // Launchers (npm, npx, sh scripts) stand between us and the app: signals go to the whole tree,
  // and the app may still be flushing, within its shutdown deadline, when the launcher has exited.
  const { config } = readConfig(env);
  const launcher = kind === 'command' ? { graceMs: config.shutdownTimeoutMs + LAUNCHED_APP_SLACK_MS } : undefined;
  const result = await run(launch, launcher, config.orphanedApp === 'stop');
  if ('failed' in result) {
    process.stderr.write(`${PROGRAM_NAME}: ${result.failed}\n`);
    process.exitCode = result.exitCode;
    return;
  }
  mirrorExit(result);
}

export async function main(args: readonly string[] = process.argv.slice(2)): Promise<void> {
  try {
    const request = parseCommandLine(args, {
      env: process.env,
      version: pyroRunVersion(),
      helpWidth: process.stdout.isTTY ? process.stdout.columns : undefined,
    });
    if (request.kind === 'exit') {
      exitWith(request);
      return;
    }
    if (request.kind === 'subcommand') {
      // Loaded only when asked for: launching an app does not need the report code.
      const run = request.name === 'report' ? (await import('./report.js')).runReport : (await import('./diff.js')).runDiff;
      process.exitCode = run(request.args, { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text), cwd: process.cwd() });
      return;
    }
    await runCommand(request.flags, request.command);
  } catch (error) {
    process.stderr.write(`${PROGRAM_NAME}: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = EXIT_INTERNAL;
  }
}
