/**
 * What to run: classify the user's command and build the child's argv and env so the preload
 * (dist/preload/register.js) loads first. Pure: file-system facts, versions and env are passed in.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Env } from '../config/index.js';
import { MAIN_PRELOAD_URL } from '../preloads.js';

/**
 * - node: the command is a Node binary; our flags go right after it.
 * - script: a script file, run by the Node that runs pyro-run.
 * - command: anything else (npm, npx, tsx...); reached through NODE_OPTIONS so nested Node processes load the preload too.
 * - missing-script: looks like a script but there is no such file: a usage error, nothing starts.
 */
export type CommandKind = 'node' | 'script' | 'command' | 'missing-script';

/** Paths are relative to the working directory the child will start in. */
export interface FileFacts {
  isFile(file: string): boolean;
  isExecutable(file: string): boolean;
}

const NODE_BINARY = /^(node|nodejs)(\.exe)?$/i;
const SCRIPT_EXTENSION = /\.(js|mjs|cjs|ts|mts|cts)$/i;

/** Node ≥ 22.7 has AsyncContextFrame behind this flag; from 24 it is the default and the flag is rejected. */
export const ASYNC_CONTEXT_FRAME_FLAG = '--experimental-async-context-frame';
const ACF_FLAG_MAJOR = 22;
const ACF_FLAG_MIN_MINOR = 7;
/** Any spelling of the AsyncContextFrame switch, on or off: the user has decided, leave it alone. */
const ACF_SWITCH = /^--(no-)?(experimental-)?async-context-frame$/;

export function isNodeBinary(word: string): boolean {
  // Both separators: a Windows path typed on any platform still names node.exe.
  return NODE_BINARY.test(path.basename(word.replaceAll('\\', '/')));
}

export function classifyCommand(command: readonly string[], files: FileFacts): CommandKind {
  const first = command[0];
  if (first === undefined) throw new Error('classifyCommand needs a command');
  if (isNodeBinary(first)) return 'node';
  if (SCRIPT_EXTENSION.test(first)) return files.isFile(first) ? 'script' : 'missing-script';
  if (files.isFile(first) && !files.isExecutable(first)) return 'script';
  return 'command';
}

/** True when the Node of this version needs `--experimental-async-context-frame` for AsyncContextFrame. */
export function needsAsyncContextFrameFlag(nodeVersion: string | undefined): boolean {
  const match = /^v?(\d+)\.(\d+)\./.exec(nodeVersion ?? '');
  if (!match) return false;
  return Number(match[1]) === ACF_FLAG_MAJOR && Number(match[2]) >= ACF_FLAG_MIN_MINOR;
}

/** Node accepts `_` for `-` in option names. */
const mentionsAsyncContextFrame = (args: readonly string[]) => args.some((arg) => ACF_SWITCH.test(arg.replaceAll('_', '-')));

/**
 * NODE_OPTIONS → argv, by Node's own rules (src/node_options.cc): words split on spaces, `"`
 * toggles quoting anywhere in a word, and inside quotes `\` escapes the next character.
 */
export function splitNodeOptions(text: string): string[] {
  const words: string[] = [];
  let current: string | undefined;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    let c = text[i] as string;
    if (quoted && c === '\\' && i + 1 < text.length) {
      c = text[++i] as string;
    } else if (c === ' ' && !quoted) {
      if (current !== undefined) words.push(current);
      current = undefined;
      continue;
    } else if (c === '"') {
      // Like Node, a quote alone does not start a word: `""` is no word at all.
      quoted = !quoted;
      continue;
    }
    current = (current ?? '') + c;
  }
  if (current !== undefined) words.push(current);
  return words;
}

/** One NODE_OPTIONS word, quoted only when Node would otherwise split or unescape it. */
export function quoteNodeOption(word: string): string {
  if (word !== '' && !/[ "\\]/.test(word)) return word;
  return `"${word.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

/** The options that preload a module, which may name pyro-run's preload already. */
const PRELOAD_FLAGS: ReadonlySet<string> = new Set(['--require', '-r', '--import']);

/** Whether `words` already preload pyro-run (`--require` or `--import`, as its path or its file: URL). */
function preloadsPreload(words: readonly string[], registerPath: string): boolean {
  const targets = new Set([registerPath, pathToFileURL(registerPath).href]);
  return words.some((word, i) => {
    if (PRELOAD_FLAGS.has(word)) return targets.has(words[i + 1] ?? '');
    const eq = word.indexOf('=');
    return eq > 0 && PRELOAD_FLAGS.has(word.slice(0, eq)) && targets.has(word.slice(eq + 1));
  });
}

/** NODE_OPTIONS for a command: the existing value plus what is missing of ours, appended. */
export function nodeOptionsFor(existing: string | undefined, registerPath: string, addAcfFlag: boolean): string {
  const words = splitNodeOptions(existing ?? '');
  const additions: string[] = [];
  if (addAcfFlag && !mentionsAsyncContextFrame(words)) additions.push(ASYNC_CONTEXT_FRAME_FLAG);
  if (!preloadsPreload(words, registerPath)) additions.push(quoteNodeOption(`--require=${registerPath}`));
  const base = (existing ?? '').trim();
  return [base, ...additions].filter((part) => part !== '').join(' ');
}

export interface LaunchInput {
  /** The user's command: first word and its arguments, verbatim. */
  command: readonly string[];
  kind: Exclude<CommandKind, 'missing-script'>;
  /** Path of the main thread's preload (dist/preload/register.js). */
  registerPath: string;
  /** The Node that runs scripts (process.execPath). */
  execPath: string;
  /** Version of the Node that will run the app, when known; decides the AsyncContextFrame flag. */
  nodeVersion: string | undefined;
  /** The child's environment before our additions (caller's env plus flag env). */
  env: Env;
}

/** What spawn gets: no shell, so every argument reaches the app exactly as typed. */
export interface Launch {
  file: string;
  args: string[];
  env: Record<string, string | undefined>;
}

export function buildLaunch(input: LaunchInput): Launch {
  const [first, ...rest] = input.command;
  if (first === undefined) throw new Error('buildLaunch needs a command');
  const addAcf = needsAsyncContextFrameFlag(input.nodeVersion);
  const env = { ...input.env };

  if (input.kind === 'command') {
    env.NODE_OPTIONS = nodeOptionsFor(input.env.NODE_OPTIONS, input.registerPath, addAcf);
    return { file: first, args: rest, env };
  }

  // Node flags go first so the user's own node flags (and the script) keep their order after ours.
  const userNodeArgs = input.kind === 'node' ? rest : [];
  const alreadyDecided = mentionsAsyncContextFrame(userNodeArgs) || mentionsAsyncContextFrame(splitNodeOptions(input.env.NODE_OPTIONS ?? ''));
  const ours = [...(addAcf && !alreadyDecided ? [ASYNC_CONTEXT_FRAME_FLAG] : []), '--require', input.registerPath];
  if (input.kind === 'node') return { file: first, args: [...ours, ...rest], env };
  return { file: input.execPath, args: [...ours, first, ...rest], env };
}

/** Path of the main thread's preload, the file `--require` takes. */
export function registerPath(): string {
  return fileURLToPath(MAIN_PRELOAD_URL);
}
