import { createRequire } from 'node:module';

/**
 * pprof-format, its CommonJS build: the one @datadog/pprof uses, so there is one copy in the
 * process. Loaded with the first window, not at start: nothing before it needs pprof.
 */
export type PprofFormat = typeof import('pprof-format', { with: { 'resolution-mode': 'require' }});
export type Profile = InstanceType<PprofFormat['Profile']>;

const require = createRequire(import.meta.url);
let loaded: PprofFormat | undefined;

export const pprofFormat = (): PprofFormat => (loaded ??= require('pprof-format') as PprofFormat);
