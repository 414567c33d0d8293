import { fileURLToPath } from 'node:url';
import type { Script } from 'node:vm';
import { nodeFs } from './builtins.js';
import { removeQuietly, writeFileAtomicSync } from './atomic-file.js';

/**
 * Loading a CommonJS file of pyro-run's own (the vendor bundles, ~1 MB of JavaScript that every
 * process with the agent parses and compiles at start) with V8's code cache for it, kept in a
 * folder of the package: what Node's compile cache does, for these files only (Node's, once
 * enabled, would cache the app's modules too, in a folder of its choosing).
 *
 * A cache entry is named for the file, a hash of its text (V8 checks nothing of a source but its
 * length), V8's version and the architecture. V8 checks the rest (its flags, its own version) and
 * rejects what does not fit; the file is then compiled from its text as without a cache, and the
 * entry written again. Reading or writing the cache never fails a load: without it the file loads
 * as `require` loads it. NODE_DISABLE_COMPILE_CACHE, which turns Node's own compile cache off, turns
 * this one off too.
 */

/** dist/.code-cache, beside the bundles (this module is dist/src/util/code-cache.js, or bundled keeping that URL). */
export const CODE_CACHE_DIR = fileURLToPath(new URL('../../.code-cache', import.meta.url));

/**
 * When an entry is written, which decides what it holds: the code V8 has compiled of the file by then.
 * - `'after-start'`: 2 s after the first load (or at exit, if that comes first), when the app's start
 *   has run the file's functions it needs: the vendor bundles, whose functions the app's first
 *   requests call.
 * - `'after-load'`: as soon as the file's body has run — the preloads, whose body is the agent's
 *   start: what runs later (the upload path, the exit's flush) is compiled when it first runs, as
 *   without a cache, instead of being read in, and held, by every process at start.
 */
export type WriteEntry = 'after-start' | 'after-load';

const WRITE_AFTER_START_MS = 2000;

interface ModuleInternals {
  _cache: Record<string, { exports: unknown } | undefined>;
  _nodeModulePaths(dir: string): string[];
  wrap(source: string): string;
  wrapper: readonly string[];
  createRequire(filename: string): NodeJS.Require;
  new (id: string): { exports: unknown; filename: string; paths: string[]; loaded: boolean };
}

interface PendingEntry {
  file: string;
  /** The bundle's file name: the entries for its earlier texts are removed once this one is written. */
  base: string;
  script: Script;
}

const pending: PendingEntry[] = [];
let writeScheduled = false;

/**
 * `require(filename)` for a CommonJS file, compiled with the code cache kept in `cacheDir`: the same
 * module object in require's cache (so a later `require` of the file, from another bundle, gets
 * it), the same `require`, `module` and `__dirname` inside, the same positions in stack traces.
 */
export function requireWithCodeCache(filename: string, cacheDir: string, writeEntry: WriteEntry = 'after-start'): unknown {
  const Module = process.getBuiltinModule('node:module') as unknown as ModuleInternals;
  if (process.env.NODE_DISABLE_COMPILE_CACHE) return Module.createRequire(filename)(filename);
  const loaded = Module._cache[filename];
  if (loaded !== undefined) return loaded.exports;
  const path = process.getBuiltinModule('node:path');
  const vm = process.getBuiltinModule('node:vm');
  const source = nodeFs().readFileSync(filename, 'utf8');
  const base = path.basename(filename);
  const file = path.join(cacheDir, entryName(base, source));
  const cachedData = readQuietly(file);
  const script = new vm.Script(Module.wrap(source), {
    filename,
    cachedData,
    // The wrapper's text is on the file's first line: positions there read as require's.
    columnOffset: -(Module.wrapper[0]?.length ?? 0),
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const module = new Module(filename);
  module.filename = filename;
  module.paths = Module._nodeModulePaths(path.dirname(filename));
  Module._cache[filename] = module;
  try {
    const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
    wrapper.call(module.exports, module.exports, Module.createRequire(filename), module, filename, path.dirname(filename));
  } catch (error) {
    delete Module._cache[filename];
    throw error;
  }
  module.loaded = true;
  if (cachedData === undefined || script.cachedDataRejected === true) {
    if (writeEntry === 'after-load') write({ file, base, script });
    else keep({ file, base, script });
  }
  return module.exports;
}

/** What ends the name of every entry this Node writes: entries of other Nodes (22, 24, 26 side by side) are theirs. */
const entrySuffix = () => `.${process.versions.v8}.${process.arch}.bin`;

/** The name of the entry for the file named `base` with the text `source`, in this Node. */
export const entryName = (base: string, source: string): string =>
  `${base}.${process.getBuiltinModule('node:crypto').hash('sha1', source).slice(0, 16)}${entrySuffix()}`;

function readQuietly(file: string): Buffer | undefined {
  try {
    return nodeFs().readFileSync(file);
  } catch {
    return undefined;
  }
}

function keep(entry: PendingEntry): void {
  pending.push(entry);
  if (writeScheduled) return;
  writeScheduled = true;
  setTimeout(writePending, WRITE_AFTER_START_MS).unref();
  process.once('exit', writePending);
}

function writePending(): void {
  for (const entry of pending.splice(0)) write(entry);
}

/** Writes an entry (the code V8 has compiled of the file by now) and removes the file's older entries. */
function write({ file, base, script }: PendingEntry): void {
  const path = process.getBuiltinModule('node:path');
  try {
    const dir = path.dirname(file);
    nodeFs().mkdirSync(dir, { recursive: true });
    // Before the serialization (milliseconds for a bundle): a folder this user cannot write (a
    // read-only image, another user's install) would otherwise cost it in every process.
    nodeFs().accessSync(dir, nodeFs().constants.W_OK);
    writeFileAtomicSync(file, script.createCachedData());
    const name = path.basename(file);
    for (const other of nodeFs().readdirSync(dir)) {
      if (other !== name && other.startsWith(`${base}.`) && other.endsWith(entrySuffix())) removeQuietly(path.join(dir, other));
    }
  } catch {
    // A package folder that cannot be written (a read-only image, another user's install): no cache.
  }
}
