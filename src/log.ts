import type { LogLevel } from './config/index.js';
import { printable } from './util/printable.js';

const RANK: Record<LogLevel, number> = { silent: 0, error: 1, warn: 2, info: 3, debug: 4 };
const PREFIX = 'pyro-run:';

/**
 * pyro-run's own voice inside the app. Everything goes to stderr with one prefix; a failure mode
 * is reported once (by key) so a dead backend is one line, not one per window. Secrets are
 * scrubbed by the redactor before anything is written.
 */
export class Logger {
  private readonly said = new Set<string>();

  constructor(
    private level: LogLevel = 'warn',
    private readonly redact: (text: string) => string = (t) => t,
    private readonly write: (line: string) => void = (line) => process.stderr.write(line),
  ) {}

  setLevel(level: LogLevel): void {
    this.level = level;
  }

  error(message: string): void {
    this.emit('error', message);
  }
  warn(message: string): void {
    this.emit('warn', message);
  }
  info(message: string): void {
    this.emit('info', message);
  }
  debug(message: string): void {
    this.emit('debug', message);
  }

  /** Warns the first time `key` is seen; later calls with the same key only reach debug. */
  warnOnce(key: string, message: string): void {
    if (this.said.has(key)) {
      this.debug(message);
      return;
    }
    this.said.add(key);
    this.warn(message);
  }

  /** Forgets a key, so the failure is reported again if it comes back after a recovery. */
  clear(key: string): boolean {
    return this.said.delete(key);
  }

  /** A line another thread's logger made (filtered by level there): scrubbed here, as this logger's own. */
  relay(line: string): void {
    try {
      this.write(this.redact(line));
    } catch {
      // stderr closed: nothing sensible left to do, and the app must not notice.
    }
  }

  private emit(level: Exclude<LogLevel, 'silent'>, message: string): void {
    if (RANK[level] > RANK[this.level]) return;
    const label = level === 'warn' ? 'warning' : level;
    try {
      this.write(`${PREFIX} ${label}: ${printable(this.redact(message))}\n`);
    } catch {
      // stderr closed: nothing sensible left to do, and the app must not notice.
    }
  }
}

/** Message text of anything thrown, for a one-line warning. */
export function reason(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
  }
  return String(error);
}
