import { type Logger, reason } from '../log.js';
import type { SampleOwner } from '../span-link/linking.js';
import { installPackageHooks } from '../tracing/package-hooks.js';
import { ioredisHooks } from './ioredis.js';
import { mysql2Hooks } from './mysql2.js';
import { nodeRedisHooks } from './node-redis.js';
import { pgHooks } from './pg.js';
import { startUndiciHooks } from './undici.js';

/**
 * Pooled and pipelining clients read every reply on a socket opened by some earlier request, in
 * that request's async context: these hooks label the reading with the request whose reply it is.
 * One file per client; each says what it patches and why there. Node's own http client needs
 * none: its parser runs each response's callbacks in the context of the request that sent it.
 */
export function startClientHooks(owner: SampleOwner, log: Logger): void {
  startUndiciHooks(owner, log);
  installPackageHooks('clients', [pgHooks(owner), mysql2Hooks(owner), ioredisHooks(owner), nodeRedisHooks(owner)], (pkg, error) =>
    log.warnOnce(`client-hooks:${pkg}`, `could not follow ${pkg}'s replies to their requests (${reason(error)}); its reply parsing goes unlabelled`),
  );
}
