import type { SampleOwner } from '../span-link/linking.js';
import type { PackageHooks, Patch } from '../tracing/package-hooks.js';
import { bindToCaller, labelsOf, ownReads, tagCommand } from './requests.js';
import { wrapMethod } from '../tracing/package-hooks.js';

type Method = (this: Mysql2Connection, ...args: unknown[]) => unknown;
/** The parts of mysql2's connection (lib/base/connection.js; lib/connection.js before 3.12) read here. */
interface Mysql2Connection {
  stream?: unknown;
  /** The command whose packets arrive now; the next ones wait in `_commands`. */
  _command?: unknown;
}

/**
 * mysql2 3. A connection runs its commands one at a time: `_command` is the one whose packets
 * arrive now, and `handlePacket` hands each packet to it (row parsing included). So:
 * - a command is tagged with its caller's labels when it is added (`addCommand`);
 * - the socket reads for the current command — its packet framing, row parsing and callbacks —
 *   and when the current command changes within a read, the samples follow;
 * - a pool hands a released connection to the next waiting `getConnection` callback from the
 *   releasing request's code, so the callback is bound to its own caller.
 */
export function mysql2Hooks(owner: SampleOwner): PackageHooks {
  const connection: Patch = (Connection) => {
    const proto = (Connection as { prototype?: object }).prototype;
    if (!proto) return;
    wrapMethod<Method>(
      proto,
      'addCommand',
      (original) =>
        function addCommand(this: Mysql2Connection, command: unknown) {
          tagCommand(command, owner);
          return original.apply(this, arguments as unknown as unknown[]);
        },
    );
    wrapMethod<Method>(
      proto,
      'handlePacket',
      (original) =>
        function handlePacket(this: Mysql2Connection) {
          // The socket is known once the connection exists, and changes once with TLS.
          ownReads(this.stream, () => labelsOf(this._command), owner);
          const before = this._command;
          const result = original.apply(this, arguments as unknown as unknown[]);
          if (this._command !== before) owner.switchTo(labelsOf(this._command));
          return result;
        },
    );
  };
  const pool: Patch = (Pool) => {
    const proto = (Pool as { prototype?: object }).prototype;
    if (!proto) return;
    wrapMethod<(this: unknown, cb: unknown) => unknown>(
      proto,
      'getConnection',
      (original) =>
        function getConnection(this: unknown, cb: unknown) {
          return original.call(this, bindToCaller(cb));
        },
    );
  };
  return {
    packages: [
      {
        name: 'mysql2',
        versions: ['>=3.0.0 <4'],
        files: { 'lib/base/connection.js': connection, 'lib/connection.js': connection, 'lib/base/pool.js': pool, 'lib/pool.js': pool },
      },
    ],
  };
}
