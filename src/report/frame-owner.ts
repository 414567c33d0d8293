/**
 * Whose code a profile frame is — the app's, a package's, Node's, V8's, or pyro-run's own — and
 * how a report names it, so that what it lists is something a user can act on: an anonymous
 * function by its file and line, the agent's frames folded out of the app's stacks and named by
 * their module where they are the leaf. Pure.
 */

export type FrameOwner =
  | { kind: 'app' }
  | { kind: 'package'; name: string }
  | { kind: 'node' }
  /** V8's built-ins and pseudo-frames: JSON.stringify, (program), (garbage collector), (idle). */
  | { kind: 'runtime' }
  /** pyro-run's bundles; `module` is what the bundle holds (`instrumentation-pg`, `OpenTelemetry`, `agent`). */
  | { kind: 'agent'; module: string };

/**
 * The agent's files under its dist folder: the preloads' bundles (preload/; register.js where
 * recordings of earlier builds name the main thread's), the vendored OpenTelemetry bundles, the
 * compiled sources.
 */
const AGENT_FILES = /^(?:preload\/|register\.js$|vendor\/|src\/)/;
/** Where the agent's dist folder is, when the recording does not say (recordings from before it did). */
const AGENT_DIST_GUESS = /[\\/]pyro-run[\\/]dist[\\/](.*)$/;
const NODE_MODULES = /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/g;
const ANONYMOUS = /^\(anonymous(?::L#(\d+):C#\d+)?\)$/;
/** agentFrameName's form. */
const AGENT_FRAME = /^\(pyro-run: (.+)\)$/;

/** A frame's file as a path: profiles name ES modules by file: URL. */
function pathOf(file: string): string {
  if (!file.startsWith('file://')) return file;
  try {
    return decodeURIComponent(new URL(file).pathname);
  } catch {
    return file;
  }
}

/** The agent module a file under its dist folder holds (`vendor/instrumentation-pg.cjs` → `instrumentation-pg`). */
function agentModule(relative: string): string | undefined {
  if (!AGENT_FILES.test(relative)) return undefined;
  const vendored = /^vendor\/(.+?)\.c?js$/.exec(relative)?.[1];
  if (vendored === undefined) return 'agent';
  return vendored === 'otel' ? 'OpenTelemetry' : vendored;
}

/** `agentDir`: the agent's dist folder as the recording names it (run.json `agentDir`). */
export function frameOwner(name: string, file: string, agentDir: string | undefined): FrameOwner {
  if (file === '') {
    const agent = AGENT_FRAME.exec(name)?.[1];
    if (agent !== undefined) return { kind: 'agent', module: agent };
    // No script: V8's pseudo-frames and its built-ins (JSON.stringify, Array.prototype.sort).
    return { kind: 'runtime' };
  }
  if (file.startsWith('node:') || /^internal[\\/]/.test(file)) return { kind: 'node' };
  const where = pathOf(file);
  const dir = agentDir === undefined ? undefined : agentDir.endsWith('/') ? agentDir : `${agentDir}/`;
  const relative = dir !== undefined && where.startsWith(dir) ? where.slice(dir.length) : AGENT_DIST_GUESS.exec(where)?.[1];
  const module = relative === undefined ? undefined : agentModule(relative.replace(/\\/g, '/'));
  if (module !== undefined) return { kind: 'agent', module };
  // The innermost node_modules: a package nested in another's is itself.
  const pkg = [...where.matchAll(NODE_MODULES)].at(-1)?.[1];
  if (pkg !== undefined) return { kind: 'package', name: pkg.replace(/\\/g, '/') };
  return { kind: 'app' };
}

/** The file's last part: what a reader recognises (`articles.js`). */
function baseName(file: string): string {
  const where = pathOf(file);
  return where.slice(Math.max(where.lastIndexOf('/'), where.lastIndexOf('\\')) + 1);
}

/**
 * How a report names a function: an anonymous one by its file and line (`<anonymous> server.js:60`,
 * not `(anonymous:L#60:C#20)`), or as code without a file (eval, `new Function`); V8's `(idle)`, whose CPU time is the thread's own work outside
 * JavaScript (the event loop, I/O, native code), says so; others as they are.
 */
export function displayName(name: string, file: string, line: number): string {
  const anonymous = ANONYMOUS.exec(name);
  if (anonymous !== null) return file === '' ? '<anonymous> (no file: eval, new Function)' : `<anonymous> ${baseName(file)}:${anonymous[1] ?? line}`;
  if (name === '(idle)') return '(idle: event loop, I/O, native code)';
  return name;
}

/** The name a leaf frame of the agent's takes in the app's stacks: its module, marked as pyro-run's. */
export const agentFrameName = (module: string): string => `(pyro-run: ${module})`;

/** A package's, Node's, the runtime's or the agent's frame: not a line of the app's own code. */
export const isAppFrame = (owner: FrameOwner): boolean => owner.kind === 'app';

/** The name of the owner as the report's "by package" view lists it. */
export function ownerName(owner: FrameOwner): string {
  switch (owner.kind) {
    case 'app':
      return 'the app';
    case 'package':
      return owner.name;
    case 'node':
      return 'Node.js';
    case 'runtime':
      return 'V8 (built-ins, GC, idle)';
    case 'agent':
      return 'pyro-run & OpenTelemetry';
  }
}
