import type { Instrumentation } from '@opentelemetry/instrumentation';
import { otelInstrumentation } from '../vendor.js';

/** Patches a module's exports in place when it loads. */
export type Patch = (exports: unknown) => void;

/** What a client hook patches in one package: its main module and files inside it (paths from the package root). */
export interface PackageHook {
  name: string;
  /** semver ranges of the package versions the patches are written for. */
  versions: string[];
  main?: Patch;
  files?: Record<string, Patch>;
}

export interface ClientHooks {
  packages: PackageHook[];
}

const HOOKS_NAME = 'pyro-run-client-hooks';
const HOOKS_VERSION = '1';

/**
 * Installs the client hooks through the require and import hooks the instrumentations use (they
 * patch clients' internal files, which are always `require`d, whether the app imports the client
 * or requires it). A patch that fails leaves that module as it is and is reported once.
 */
export function installClientHooks(hooks: readonly ClientHooks[], onError: (pkg: string, error: unknown) => void): Instrumentation {
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
          Object.entries(pkg.files ?? {}).map(([file, patch]) => new InstrumentationNodeModuleFile(`${pkg.name}/${file}`, pkg.versions, guarded(pkg.name, patch), () => undefined)),
        ),
    ),
  );

  class ClientHooksInstrumentation extends InstrumentationBase {
    constructor() {
      super(HOOKS_NAME, HOOKS_VERSION, {});
    }

    protected init() {
      return definitions;
    }
  }
  return new ClientHooksInstrumentation();
}
