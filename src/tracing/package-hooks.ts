import type { Instrumentation } from '@opentelemetry/instrumentation';
import { otelInstrumentation } from '../vendor.js';
import { standIn } from './function-shape.js';

/** Patches a module's exports in place when it loads. */
export type Patch = (exports: unknown) => void;

/** What a hook patches in one package: its main module and files inside it (paths from the package root). */
export interface PackageHook {
  name: string;
  /** semver ranges of the package versions the patches are written for. */
  versions: string[];
  main?: Patch;
  files?: Record<string, Patch>;
}

/** The hooks of one concern (a client's, a worker pool's): the packages it patches. */
export interface PackageHooks {
  packages: PackageHook[];
}

const HOOKS_NAME = 'pyro-run-package-hooks';
const HOOKS_VERSION = '1';

/**
 * Installs hooks through the require and import hooks the instrumentations use (the client hooks
 * patch clients' internal files, which are always `require`d, whether the app imports the client
 * or requires it). A patch that fails leaves that module as it is and is reported once. Each call
 * makes one instrumentation of its own.
 */
export function installPackageHooks(name: string, hooks: readonly PackageHooks[], onError: (pkg: string, error: unknown) => void): Instrumentation {
  const { InstrumentationBase, InstrumentationNodeModuleDefinition, InstrumentationNodeModuleFile } = otelInstrumentation();
  const guarded = (pkg: string, patch: Patch) => (exports: unknown) => {
    try {
      patch(exports);
    } catch (error) {
      onError(pkg, error);
    }
    return exports;
  };
  const definitions = hooks.flatMap((client) =>
    client.packages.map(
      (pkg) =>
        new InstrumentationNodeModuleDefinition(
          pkg.name,
          pkg.versions,
          pkg.main && guarded(pkg.name, pkg.main),
          undefined,
          Object.entries(pkg.files ?? {}).map(
            ([file, patch]) => new InstrumentationNodeModuleFile(`${pkg.name}/${file}`, pkg.versions, guarded(pkg.name, patch), () => undefined),
          ),
        ),
    ),
  );

  class PackageHooksInstrumentation extends InstrumentationBase {
    constructor() {
      super(`${HOOKS_NAME}-${name}`, HOOKS_VERSION, {});
    }

    protected init() {
      return definitions;
    }
  }
  return new PackageHooksInstrumentation();
}

/** What wrapMethod put in place, so that it does not wrap its own again: kept aside, not marked on the function. */
const wrappedByUs = new WeakSet<object>();

/**
 * Replaces `target[name]` with `wrap(original)`, once (a module required again, or loaded twice,
 * is not wrapped twice), shaped as the original (function-shape.ts). Returns false when there is
 * no such method.
 */
export function wrapMethod<F extends (...args: never[]) => unknown>(target: object, name: string, wrap: (original: F) => F): boolean {
  const holder = target as Record<string, unknown>;
  const original = holder[name];
  if (typeof original !== 'function') return false;
  if (wrappedByUs.has(original)) return true;
  const wrapped = standIn(wrap(original as F), original);
  wrappedByUs.add(wrapped);
  Object.defineProperty(holder, name, {
    value: wrapped,
    writable: true,
    configurable: true,
    enumerable: Object.getOwnPropertyDescriptor(holder, name)?.enumerable ?? false,
  });
  return true;
}
