import type { SampleOwner } from '../span-link/linking.js';
import type { PackageHooks } from '../tracing/package-hooks.js';
import { labelsOf, tagCommand } from './requests.js';
import { wrapMethod } from '../tracing/package-hooks.js';

/** The parts of @redis/client's RESP decoder read here (dist/lib/RESP/decoder.js). */
interface Decoder {
  write(chunk: unknown): unknown;
  /** The type mapping of the command at the head of the queue: the one whose reply is decoded now. */
  getTypeMapping: (() => unknown) | undefined;
}

/** A command's type mapping with the labels of its caller: the decoder asks the queue for it while it decodes that command's reply. */
function taggedMapping(mapping: unknown, owner: SampleOwner): object {
  const tagged = Object.create(typeof mapping === 'object' && mapping !== null ? mapping : Object.prototype) as object;
  tagCommand(tagged, owner);
  return tagged;
}

/** The decoder reads for the command at the head of the queue, and follows the head as each reply's decoding starts. */
function ownDecoder(decoder: Decoder, owner: SampleOwner): void {
  let read = decoder.getTypeMapping;
  const follow = (fn: Decoder['getTypeMapping']): Decoder['getTypeMapping'] =>
    typeof fn !== 'function'
      ? fn
      : function typeMapping(this: unknown) {
          const mapping = fn.apply(this, arguments as unknown as []);
          owner.switchTo(labelsOf(mapping));
          return mapping;
        };
  let followed = follow(read);
  // The queue sets a new getTypeMapping for pub/sub and MONITOR: each one is followed too.
  Object.defineProperty(decoder, 'getTypeMapping', {
    configurable: true,
    enumerable: true,
    get: () => followed,
    set: (fn: Decoder['getTypeMapping']) => {
      read = fn;
      followed = follow(fn);
    },
  });
  const write = decoder.write;
  decoder.write = function ownedWrite(this: unknown) {
    return owner.run(labelsOf(read?.()), write, this, arguments);
  };
}

/**
 * node-redis 5–6 (@redis/client). One connection carries every caller's commands at once,
 * pipelined, and its private queue hands each reply to the command at its head. What is public:
 * the decoder, which asks the queue for the head command's type mapping as it starts decoding each
 * reply. So:
 * - a command is tagged with its caller's labels through its type mapping (`addCommand` gets one
 *   of its own, which reads through to the mapping it had);
 * - the decoder's reads run for the head command, and follow the head each time the decoder asks
 *   for the type mapping: each reply in a read goes to its own command's request.
 */
export function nodeRedisHooks(owner: SampleOwner): PackageHooks {
  return {
    packages: [
      {
        name: '@redis/client',
        versions: ['>=5.0.0 <7'],
        files: {
          'dist/lib/client/commands-queue.js': (exports) => {
            const holder = exports as { default?: new (...args: never[]) => { decoder: Decoder } };
            const Queue = holder.default;
            if (typeof Queue !== 'function') return;
            wrapMethod<(this: unknown, args: unknown, options?: { typeMapping?: unknown }) => unknown>(
              Queue.prototype,
              'addCommand',
              (original) =>
                function addCommand(this: unknown, args: unknown, options?: { typeMapping?: unknown }) {
                  return original.call(this, args, { ...options, typeMapping: taggedMapping(options?.typeMapping, owner) });
                },
            );
            // Made once per connection, with its decoder.
            holder.default = class OwnedReadsQueue extends Queue {
              constructor(...args: never[]) {
                super(...args);
                ownDecoder(this.decoder, owner);
              }
            };
          },
        },
      },
    ],
  };
}
