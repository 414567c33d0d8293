/**
 * What the subcommands that read recordings (`report`, `diff`) share: where they write and resolve
 * paths from, and a commander parser that never exits the process nor prints on its own, whose
 * usage errors end as `<command>: <message>` and a hint, exit 2, before anything is read.
 */
import { Command, CommanderError } from 'commander';

/** Bad input: nothing was read. */
export const EXIT_USAGE = 2;

export interface CommandIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Relative paths resolve from here. */
  cwd: string;
}

/** A commander Command named `name` whose help and errors go through `io`. */
export function subcommand(name: string, io: CommandIo): Command {
  return new Command(name)
    .helpOption('-h, --help', 'print this help and exit')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout(text),
      writeErr: (text) => io.stderr(text),
      outputError: () => undefined,
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    });
}

/** `name: message` and the help hint on stderr: exit EXIT_USAGE. */
export function usageFailure(name: string, messages: readonly string[], io: CommandIo): number {
  io.stderr(`${messages.map((message) => `${name}: ${message}\n`).join('')}Try '${name} --help' for more information.\n`);
  return EXIT_USAGE;
}

/** Parses `args` with `command`: undefined when its action ran, else the exit code (0 after --help). */
export function parseSubcommand(command: Command, args: readonly string[], io: CommandIo): number | undefined {
  try {
    command.parse([...args], { from: 'user' });
    return undefined;
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    if (error.exitCode === 0) return 0;
    return usageFailure(command.name(), [error.message.replace(/^error: /, '')], io);
  }
}

/** The message of whatever was thrown, on one line. */
export function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s*\n\s*/g, ' ');
}

/** Runs `write`, naming the file the user asked for (not a temporary one) when it fails. */
export function writeOutput(file: string, write: (file: string) => void): void {
  try {
    write(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(`cannot write ${file} (${code ?? (error as Error).message})`);
  }
}
