import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAIN_PRELOAD_URL, WORKER_PRELOAD_URL } from '../../src/preloads.js';

/** Paths of the built package, as users run it. Tests run from dist/test/**. */
export const repoRoot = path.resolve(fileURLToPath(import.meta.url), '../../../..');
export const registerPath = fileURLToPath(MAIN_PRELOAD_URL);
export const workerPreloadPath = fileURLToPath(WORKER_PRELOAD_URL);
export const cliPath = path.join(repoRoot, 'dist/bin/pyro-run.js');
export const fixture = (...parts: string[]) => path.join(repoRoot, 'test/fixtures', ...parts);
/** The other Node majors, from devDependencies (the tests themselves run on Node 24). */
export const NODE20 = path.join(repoRoot, 'node_modules/node20/bin/node');
export const NODE22 = path.join(repoRoot, 'node_modules/node22/bin/node');
export const NODE26 = path.join(repoRoot, 'node_modules/node26/bin/node');

type Stream = 'stdout' | 'stderr';

/** The processes below `pid`, from /proc (Linux): the CLI's app and what it started. */
export function descendants(pid: number): number[] {
  let children: number[];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
  return children.flatMap((child) => [child, ...descendants(child)]);
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * A real child process with its output collected, and ways to wait on it that are driven by its
 * events (a line on stdout, its exit), never by sleeping.
 */
export class Child {
  stdout = '';
  stderr = '';
  readonly exited: Promise<Exit>;
  private readonly lineWaiters: { pattern: RegExp; stream: Stream; resolve: (m: RegExpMatchArray) => void }[] = [];

  constructor(readonly process: ChildProcess) {
    process.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
      this.checkLines();
    });
    process.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
      this.checkLines();
    });
    this.exited = once(process, 'close').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }));
  }

  /** Resolves with the first match of `pattern` in stdout (or stderr); rejects if the process ends first or time runs out. */
  async line(pattern: RegExp, timeoutMs = 30_000, stream: Stream = 'stdout'): Promise<RegExpMatchArray> {
    const existing = this[stream].match(pattern);
    if (existing) return existing;
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        new Promise<RegExpMatchArray>((resolve) => this.lineWaiters.push({ pattern, stream, resolve })),
        this.exited.then((exit) => {
          throw new Error(`process ended (${JSON.stringify(exit)}) before printing ${pattern}\nstdout: ${this.stdout}\nstderr: ${this.stderr}`);
        }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms\nstdout: ${this.stdout}\nstderr: ${this.stderr}`)), timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Exit with a bound: a child that hangs fails the test instead of hanging it. */
  async exit(timeoutMs = 30_000): Promise<Exit & { ms: number }> {
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      const exit = await Promise.race([
        this.exited,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            this.process.kill('SIGKILL');
            reject(new Error(`process did not exit within ${timeoutMs} ms\nstdout: ${this.stdout}\nstderr: ${this.stderr}`));
          }, timeoutMs);
        }),
      ]);
      return { ...exit, ms: Date.now() - started };
    } finally {
      clearTimeout(timer);
    }
  }

  private checkLines(): void {
    for (const waiter of [...this.lineWaiters]) {
      const match = this[waiter.stream].match(waiter.pattern);
      if (match) {
        this.lineWaiters.splice(this.lineWaiters.indexOf(waiter), 1);
        waiter.resolve(match);
      }
    }
  }
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Node binary; defaults to the one running the tests. */
  node?: string;
}

/** Env for a child: the test's env minus anything of ours or OTel's that could leak in, plus `extra`. */
export function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(OTEL_|PYROSCOPE_|PYRO_RUN_|NODE_OPTIONS$)/.test(key)) continue;
    env[key] = value;
  }
  // `node` on PATH is the Node under test, as under `npm test`.
  env.PATH = `${path.dirname(process.execPath)}${path.delimiter}${env.PATH ?? ''}`;
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

/** `node <args>`: node flags and script as given. */
export function runNode(args: string[], options: RunOptions = {}): Child {
  return new Child(
    spawn(options.node ?? process.execPath, args, { env: childEnv(options.env), cwd: options.cwd ?? repoRoot, stdio: ['ignore', 'pipe', 'pipe'] }),
  );
}

/** The real CLI: `pyro-run <args>`. */
export function runCli(args: string[], options: RunOptions = {}): Child {
  return runNode([cliPath, ...args], options);
}
