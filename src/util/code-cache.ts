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
 * as `require` loads it.
 */

/** Entries are written this long after the first load, when the start's code has been compiled (or at exit, if that comes first). */
const WRITE_AFTER_MS = 2000;

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
export function requireWithCodeCache(filename: string, cacheDir: string): unknown {
  const Module = process.getBuiltinModule('node:module') as unknown as ModuleInternals;
  const loaded = Module._cache[filename];
  if (loaded !== undefined) return loaded.exports;
  const path = process.getBuiltinModule('node:path');
  const vm = process.getBuiltinModule('node:vm');
  const source = nodeFs().readFileSync(filename, 'utf8');
  const base = path.basename(filename);
  const hash = process.getBuiltinModule('node:crypto').hash('sha1', source).slice(0, 16);
  const file = path.join(cacheDir, `${base}.${hash}${entrySuffix()}`);
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
  if (cachedData === undefined || script.cachedDataRejected === true) keep({ file, base, script });
  return module.exports;
}

/** What ends the name of every entry this Node writes: entries of other Nodes (22, 24, 26 side by side) are theirs. */
const entrySuffix = () => `.${process.versions.v8}.${process.arch}.bin`;

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
  setTimeout(writePending, WRITE_AFTER_MS).unref();
  process.once('exit', writePending);
}

/** Writes each pending entry (the code V8 has compiled of the file by now) and removes the file's older entries. */
function writePending(): void {
  const path = process.getBuiltinModule('node:path');
  for (const { file, base, script } of pending.splice(0)) {
    try {
      const dir = path.dirname(file);
      nodeFs().mkdirSync(dir, { recursive: true });
      writeFileAtomicSync(file, script.createCachedData());
      const name = path.basename(file);
      for (const other of nodeFs().readdirSync(dir)) {
        if (other !== name && other.startsWith(`${base}.`) && other.endsWith(entrySuffix())) removeQuietly(path.join(dir, other));
      }
    } catch {
      // A package folder that cannot be written (a read-only image, another user's install): no cache.
    }
  }
}
