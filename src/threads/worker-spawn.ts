import { fileURLToPath } from 'node:url';
import type { Logger } from '../log.js';
import { EXEC_ARGV_KEY } from './protocol.js';
import { MAIN_PRELOAD_URL, WORKER_PRELOAD_URL } from '../preloads.js';

/**
 * Every worker thread the app starts runs the agent's preload. A worker runs the `--require`
 * preloads of its options, but no `--import` one when it is started from a string (`eval: true`),
 * and neither of the main thread's when the app gives it `execArgv` of its own. So the Worker
 * constructor of each thread with an agent adds `--require` of a worker's preload
 * (worker-preload.ts: a worker's agent only, lighter than the main thread's) to the options of
 * every worker it starts: to the app's `execArgv` when it gives one, else to this thread's, which a
 * worker inherits when given none, less the main thread's preload (`--require …/dist/preload/register.js`
 * as the CLI gives it, or a user's `--import`), which a worker would load for nothing.
 *
 * Inside the worker, `process.execArgv` is what it would have been without pyro-run, but for the
 * main thread's preload, which stands as the worker's (`shownExecArgv`; the worker's preload puts it
 * back: worker-preload.ts), so an app that reads or passes it on sees what it gave.
 *
 * A worker refuses Node options that act on the whole process or on V8 (`--max-old-space-size`,
 * `--expose-gc`: ERR_WORKER_INVALID_EXEC_ARGV) when they are given, though it inherits them; those
 * are left out of the inherited list, as they act on the worker anyway. A constructor call that
 * still throws with ours is made again as the app made it, so the app gets its own outcome: that
 * worker runs without the agent, and from then on no message anywhere carries an envelope
 * (`unwrapLost`), since that worker could not take it off.
 */

/** A worker's preload, as a path its `--require` takes. */
const WORKER_PRELOAD = fileURLToPath(WORKER_PRELOAD_URL);
/** The main thread's preload, as the CLI and users name it in `--import` or `--require`: a file URL or a path. */
const MAIN_PRELOADS: ReadonlySet<string> = new Set([MAIN_PRELOAD_URL.href, fileURLToPath(MAIN_PRELOAD_URL)]);
const PRELOAD_FLAGS: ReadonlySet<string> = new Set(['--import', '--require', '-r']);
/** pyro-run's own scripts (the final flush's worker): started as they are. */
const OWN_SCRIPTS = new URL('../../', import.meta.url).href;
const REQUIRE_FLAGS: ReadonlySet<string> = new Set(['--require', '-r']);
/** ERR_WORKER_INVALID_EXEC_ARGV's message lists the refused options after this (lib/internal/errors.js). */
const INVALID_LIST = /invalid execArgv flags: (.*)$/;

type WorkerOptions = import('node:worker_threads').WorkerOptions;

export interface SpawnParts {
  log: Logger;
  /** A worker was started without the agent. */
  unwrapLost: () => void;
  /** A worker the app terminates says no goodbye of its own. */
  terminated: (threadId: number) => void;
}

/** Whether `execArgv` already preloads a worker's agent with `--require`. */
export function preloadsAgent(execArgv: readonly string[]): boolean {
  return execArgv.some((arg, i) => (REQUIRE_FLAGS.has(execArgv[i - 1] ?? '') && arg === WORKER_PRELOAD) || arg === `--require=${WORKER_PRELOAD}`);
}

/** `execArgv` without the main thread's preload (`--import <url>`, `--require=<path>`, …), or with `instead` in its place. */
export function withoutMainPreload(execArgv: readonly string[], instead: readonly string[] = []): string[] {
  const out: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i]!;
    const eq = arg.indexOf('=');
    const pair = PRELOAD_FLAGS.has(arg) && MAIN_PRELOADS.has(execArgv[i + 1] ?? '');
    if (pair || (eq > 0 && PRELOAD_FLAGS.has(arg.slice(0, eq)) && MAIN_PRELOADS.has(arg.slice(eq + 1)))) {
      if (pair) i++;
      if (!preloadsAgent(out)) out.push(...instead);
      continue;
    }
    out.push(arg);
  }
  return out;
}

/**
 * The `process.execArgv` a worker shows: what it would have had without pyro-run, but for the main
 * thread's preload, which stands as the worker's (`--require <worker-preload.js>`). A worker
 * starts its loader hooks' thread (`module.register`, as tsx does) with its `process.execArgv`:
 * there the main thread's `--import` would be loaded by the very thread that loads modules, which
 * then waits on itself (seen with tsx: the worker's first `import()` never settled).
 */
export function shownExecArgv(bare: readonly string[]): string[] {
  return withoutMainPreload(bare, ['--require', WORKER_PRELOAD]);
}

/** The options refused in a worker, from ERR_WORKER_INVALID_EXEC_ARGV; undefined for any other error. */
export function refusedOptions(error: unknown): string[] | undefined {
  if ((error as { code?: unknown } | null)?.code !== 'ERR_WORKER_INVALID_EXEC_ARGV') return undefined;
  const listed = INVALID_LIST.exec((error as Error).message)?.[1];
  return listed === undefined ? undefined : listed.split(', ');
}

/** `execArgv` with a worker's preload added (last, as --import preloads run after --require ones on the main thread). */
export function withPreload(execArgv: readonly string[]): string[] {
  return preloadsAgent(execArgv) ? [...execArgv] : [...execArgv, '--require', WORKER_PRELOAD];
}

/** Whether a worker's script is one of pyro-run's own: a file URL (or path) under its folder. */
function isOwn(script: unknown): boolean {
  if (script instanceof URL) return script.href.startsWith(OWN_SCRIPTS);
  return typeof script === 'string' && script.startsWith(fileURLToPath(OWN_SCRIPTS));
}

/** Makes this thread's Worker constructor start every worker with the preload. */
export function spawnWithAgent(parts: SpawnParts): void {
  const threads = process.getBuiltinModule('node:worker_threads') as typeof import('node:worker_threads');
  const Worker = threads.Worker;
  /** Options of this thread's that a worker refuses when they are given: left out of what it inherits. */
  const refused = new Set<string>();
  const inherited = () => withPreload(withoutMainPreload(process.execArgv).filter((arg) => !refused.has(arg)));

  /** Starts a worker with `execArgv`, telling it the `execArgv` it would have had without pyro-run (the environment data a worker takes as it is made). */
  const startWith = (target: typeof Worker, args: unknown[], newTarget: unknown, options: WorkerOptions | undefined, execArgv: string[]) => {
    const before = threads.getEnvironmentData(EXEC_ARGV_KEY);
    threads.setEnvironmentData(EXEC_ARGV_KEY, shownExecArgv(options?.execArgv ?? process.execArgv));
    try {
      return Reflect.construct(
        target,
        [args[0], Object.create(options ?? null, { execArgv: { value: execArgv, enumerable: true } }), ...args.slice(2)],
        newTarget as typeof Worker,
      ) as InstanceType<typeof Worker>;
    } finally {
      threads.setEnvironmentData(EXEC_ARGV_KEY, before as never);
    }
  };

  threads.Worker = new Proxy(Worker, {
    construct(target, args, newTarget) {
      const options = args[1] as WorkerOptions | undefined;
      if (isOwn(args[0])) return Reflect.construct(target, args, newTarget);
      if (options !== undefined && (typeof options !== 'object' || options === null || (options.execArgv !== undefined && !Array.isArray(options.execArgv)))) {
        return Reflect.construct(target, args, newTarget);
      }
      const given = options?.execArgv;
      try {
        return startWith(target, args, newTarget, options, given ? withPreload(given) : inherited());
      } catch (error) {
        const refusedNow = given === undefined ? refusedOptions(error) : undefined;
        if (refusedNow?.some((arg) => !refused.has(arg))) {
          for (const arg of refusedNow) refused.add(arg);
          try {
            return startWith(target, args, newTarget, options, inherited());
          } catch {
            // Given up below: the worker is started as the app asked.
          }
        }
        const worker = Reflect.construct(target, args, newTarget);
        parts.unwrapLost();
        parts.log.warnOnce(
          'worker-spawn',
          `a worker thread runs without pyro-run (its options could not take the preload: ${error instanceof Error ? error.message : String(error)}); it is not profiled, and messages between threads carry no span from now on`,
        );
        return worker;
      }
    },
  });

  const stop = Worker.prototype.terminate;
  Worker.prototype.terminate = function terminate(this: InstanceType<typeof Worker>) {
    if (this.threadId >= 0) parts.terminated(this.threadId);
    return Reflect.apply(stop, this, arguments) as Promise<number>;
  };
}
