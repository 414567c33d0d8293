import { createRequire, register } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * Lets OpenTelemetry instrument ES modules: import-in-the-middle's loader must be registered
 * before the app's first `import`, and from the preload itself — `--import hook.mjs` alone
 * instruments nothing (opentelemetry-js doc/esm-support.md registers the hook and starts the
 * SDK from one `--import` entry, before the app). The in-thread synchronous hooks are used where Node's
 * `module.registerHooks` is fixed (22.22.3+, 24.11.1+, 26); older 22.x/24.x fall back to the
 * off-thread `module.register` loader.
 */
export function registerEsmHook(): 'sync' | 'async' {
  const { supportsSyncHooks } = require('import-in-the-middle/supports-sync-hooks.mjs') as { supportsSyncHooks(): boolean };
  if (supportsSyncHooks()) {
    const hooks = require('import-in-the-middle/register-hooks.mjs') as { register(options?: object): void };
    hooks.register();
    return 'sync';
  }
  register('import-in-the-middle/hook.mjs', import.meta.url);
  return 'async';
}
