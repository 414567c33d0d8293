/**
 * Node builtins for code that runs inside the app, taken with `process.getBuiltinModule` instead
 * of an ESM `import`. Importing `node:fs` or `node:util` from ESM builds a namespace of all their
 * exports, which runs their lazy getters (`fs.promises` loads the promise API and streams): ~3 MB
 * of RSS before the app's first line, for nothing we use. Modules Node has not loaded at all
 * (zlib, fs/promises) are taken at first use, when a window or a scan needs them.
 */
export const nodeFs = (): typeof import('node:fs') => process.getBuiltinModule('node:fs');
export const nodeFsPromises = (): typeof import('node:fs/promises') => process.getBuiltinModule('node:fs/promises');
export const nodeZlib = (): typeof import('node:zlib') => process.getBuiltinModule('node:zlib');
export const nodeOs = (): typeof import('node:os') => process.getBuiltinModule('node:os');
