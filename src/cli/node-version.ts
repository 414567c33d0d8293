/**
 * Which Node version will run the app: decides whether the AsyncContextFrame flag is needed
 * (Node 22) or fatal (Node 24+). Asking another binary costs a process start, so the Node that
 * runs pyro-run answers for itself.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Env } from '../config/index.js';
import type { CommandKind, FileFacts } from './argv.js';

/** A healthy `node -p` answers in well under a second; a hung or odd binary must not hold up the app. */
const PROBE_TIMEOUT_MS = 5_000;
const VERSION_OUTPUT = /^v?\d+\.\d+\.\d+/;

/** The real file system, for classifyCommand. */
export const fileFacts: FileFacts = {
  isFile(file) {
    try {
      return statSync(file).isFile();
    } catch {
      return false;
    }
  },
  isExecutable(file) {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  },
};

/** Where spawn would find `command`, searching `searchPath` the way execvp does. */
export function resolveCommand(command: string, searchPath: string | undefined): string | undefined {
  if (command.includes('/') || command.includes(path.sep)) return path.resolve(command);
  for (const dir of (searchPath ?? '').split(path.delimiter)) {
    const candidate = path.resolve(dir === '' ? '.' : dir, command);
    if (fileFacts.isFile(candidate) && fileFacts.isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function sameFile(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/** `<binary> -p process.versions.node`; undefined when it cannot say. */
function probe(binary: string, env: Env): string | undefined {
  // Without NODE_OPTIONS: the probe must not load the user's preloads (or ours), nor fail on them.
  const { NODE_OPTIONS: _ignored, ...probeEnv } = env;
  try {
    const output = execFileSync(binary, ['-p', 'process.versions.node'], {
      encoding: 'utf8',
      env: probeEnv,
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: PROBE_TIMEOUT_MS,
    }).trim();
    return VERSION_OUTPUT.test(output) ? output : undefined;
  } catch {
    return undefined;
  }
}

/** Version of the Node binary `command` (a name looked up on env.PATH, or a path). */
export function versionOfNode(command: string, env: Env): string | undefined {
  const resolved = resolveCommand(command, env.PATH);
  if (resolved === undefined) return undefined;
  if (sameFile(resolved, process.execPath)) return process.versions.node;
  return probe(resolved, env);
}

/**
 * The version of the Node that will run the app: ours for a script, the named binary for
 * `node ...`, and for any other command the `node` its PATH finds (npm, npx and shebang
 * scripts start that one).
 */
export function targetNodeVersion(kind: Exclude<CommandKind, 'missing-script'>, command: readonly string[], env: Env): string | undefined {
  if (kind === 'script') return process.versions.node;
  const binary = kind === 'node' ? command[0] : 'node';
  return binary === undefined ? undefined : versionOfNode(binary, env);
}
