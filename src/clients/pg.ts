import type { SampleOwner } from '../span-link/linking.js';
import { bindToCaller, labelsOf, ownReads, tagCommand } from './requests.js';
import { wrapMethod } from '../tracing/package-hooks.js';
import type { PackageHooks } from '../tracing/package-hooks.js';

type Method = (this: PgClient, ...args: unknown[]) => unknown;
/**
 * The parts of pg's Client (pg/lib/client.js) read here. pg 8.17 renamed `activeQuery` and
 * `queryQueue` to `_activeQuery` and `_queryQueue`, and kept the old names as getters that print a
 * deprecation warning; pg 8.0–8.16, still what many lockfiles hold, has only the old names.
 */
interface PgClient {
  _activeQuery?: unknown;
  _queryQueue?: unknown[];
  activeQuery?: unknown;
  queryQueue?: unknown[];
  connection?: object;
}

/**
 * The query whose reply the client reads now, and the queries waiting behind it, under the names
 * this pg has: 8.17 and later set `_activeQuery` and `_queryQueue` in the constructor, so where they
 * exist the deprecated getters are never read.
 */
const activeQueryOf = (client: PgClient): unknown => ('_activeQuery' in client ? client._activeQuery : client.activeQuery);
const queueOf = (client: PgClient): unknown[] | undefined => ('_queryQueue' in client ? client._queryQueue : client.queryQueue);

/** On a pg Connection: whose reply it reads now (its Client's active query's request). */
const REPLY_OWNER = Symbol('pyro-run pg reply owner');
type OwnedConnection = { [REPLY_OWNER]?: () => ReturnType<typeof labelsOf> };

/**
 * pg 8 with pg-pool 3. A Client runs one query at a time (or, with `pipeline: true`, several on
 * the wire in order); its active query is the one whose messages the connection reads now, and every
 * message its socket delivers — the protocol parsing (pg-protocol), each row's type parsers
 * (`Result.parseRow`), the result callbacks — goes to that query's request:
 * - a query is tagged with its caller's labels when it is queued (`query()` queues it, then pulses
 *   the queue: every query still untagged at a pulse is the new one);
 * - the connection's socket reads for the client's active query; when the active query changes
 *   within a read (readyForQuery: pipelined replies in one chunk), the samples follow;
 * - a pool hands a client to the next waiting `connect` callback from the releasing request's
 *   reply, so the callback is bound to its own caller (as OTel's pg instrumentation also does).
 */
export function pgHooks(owner: SampleOwner): PackageHooks {
  return {
    packages: [
      {
        name: 'pg',
        versions: ['>=8.0.0 <9'],
        files: {
          'lib/client.js': (Client) => {
            const proto = (Client as { prototype?: object }).prototype;
            if (!proto) return;
            wrapMethod<Method>(
              proto,
              '_pulseQueryQueue',
              (original) =>
                function pulse(this: PgClient) {
                  for (const query of queueOf(this) ?? []) tagCommand(query, owner);
                  return original.apply(this, arguments as unknown as unknown[]);
                },
            );
            wrapMethod<Method>(
              proto,
              '_attachListeners',
              (original) =>
                function attachListeners(this: PgClient, con: unknown) {
                  if (typeof con === 'object' && con !== null) (con as OwnedConnection)[REPLY_OWNER] = () => labelsOf(activeQueryOf(this));
                  return original.apply(this, arguments as unknown as unknown[]);
                },
            );
            wrapMethod<Method>(
              proto,
              '_handleReadyForQuery',
              (original) =>
                function handleReadyForQuery(this: PgClient) {
                  const result = original.apply(this, arguments as unknown as unknown[]);
                  owner.switchTo(labelsOf(activeQueryOf(this)));
                  return result;
                },
            );
          },
          'lib/connection.js': (Connection) => {
            const proto = (Connection as { prototype?: object }).prototype;
            if (!proto) return;
            wrapMethod<(this: OwnedConnection, stream: unknown) => unknown>(
              proto,
              'attachListeners',
              (original) =>
                function attachListeners(this: OwnedConnection, stream: unknown) {
                  ownReads(stream, () => this[REPLY_OWNER]?.(), owner);
                  return original.call(this, stream);
                },
            );
          },
        },
      },
      {
        name: 'pg-pool',
        versions: ['>=3.0.0 <4'],
        main: (Pool) => {
          const proto = (Pool as { prototype?: object }).prototype;
          if (!proto) return;
          wrapMethod<(this: unknown, cb?: unknown) => unknown>(
            proto,
            'connect',
            (original) =>
              function connect(this: unknown, cb?: unknown) {
                return arguments.length === 0 ? original.call(this) : original.call(this, bindToCaller(cb));
              },
          );
        },
      },
    ],
  };
}
