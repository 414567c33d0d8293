import type { SampleOwner } from '../span-link/linking.js';
import type { PackageHooks } from '../tracing/package-hooks.js';
import { labelsOf, ownReads, tagCommand } from './requests.js';
import { wrapMethod } from '../tracing/package-hooks.js';

/** The parts of an ioredis client read here: the commands sent and waiting for their replies, in order. */
interface IoRedis {
  stream?: unknown;
  commandQueue?: { peekFront(): { command?: unknown } | undefined };
}

const headLabels = (redis: IoRedis | undefined) => labelsOf(redis?.commandQueue?.peekFront()?.command);

/**
 * ioredis 5–6. One connection carries every caller's commands at once, pipelined: replies come
 * back in the order the commands were sent, each to the head of `commandQueue`, several to a
 * socket read. So:
 * - a command is tagged with its caller's labels when it is sent (`sendCommand`; pipelines and
 *   MULTI send theirs through it too);
 * - the socket reads for the command at the head of the queue, and after each reply (or error
 *   reply) is handed over, the samples follow the new head: the decoding of every reply in a read
 *   goes to its own command's request.
 */
export function ioredisHooks(owner: SampleOwner): PackageHooks {
  return {
    packages: [
      {
        name: 'ioredis',
        versions: ['>=5.0.0 <7'],
        files: {
          'built/Redis.js': (exports) => {
            const proto = (exports as { default?: { prototype?: object } }).default?.prototype;
            if (!proto) return;
            wrapMethod<(this: IoRedis, command: unknown, ...rest: unknown[]) => unknown>(
              proto,
              'sendCommand',
              (original) =>
                function sendCommand(this: IoRedis, command: unknown) {
                  tagCommand(command, owner);
                  return original.apply(this, arguments as unknown as [unknown]);
                },
            );
          },
          'built/DataHandler.js': (exports) => {
            const holder = exports as { default?: new (redis: IoRedis, options: unknown) => object };
            const DataHandler = holder.default;
            if (typeof DataHandler !== 'function') return;
            for (const name of ['returnReply', 'returnError']) {
              wrapMethod<(this: { redis?: IoRedis }, ...args: unknown[]) => unknown>(
                DataHandler.prototype,
                name,
                (original) =>
                  function reply(this: { redis?: IoRedis }) {
                    const result = original.apply(this, arguments as unknown as unknown[]);
                    owner.switchTo(headLabels(this.redis));
                    return result;
                  },
              );
            }
            // Made once per connection, which it reads from: its socket is owned before it listens.
            holder.default = class OwnedReadsDataHandler extends DataHandler {
              constructor(redis: IoRedis, options: unknown) {
                ownReads(redis?.stream, () => headLabels(redis), owner);
                super(redis, options);
              }
            };
          },
        },
      },
    ],
  };
}
