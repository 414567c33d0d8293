import { type Logger, reason } from '../log.js';

type Channels = typeof import('node:diagnostics_channel');

/**
 * Subscribes to a library's diagnostics channel with a callback of ours that can never throw into
 * the library. Node runs subscribers inside the publisher's call and re-throws a subscriber's error
 * as an uncaught exception on the next tick: an error of ours would crash the app from code it
 * never scheduled. Instead the first error is warned once, and the subscriber stands down for good
 * (what it adds is labels and names, never the app's behaviour).
 */
export function subscribeSafely(channel: string, log: Logger, what: string, onMessage: (message: unknown) => void): void {
  const channels = process.getBuiltinModule('node:diagnostics_channel') as Channels;
  const subscriber = (message: unknown) => {
    try {
      onMessage(message);
    } catch (error) {
      channels.unsubscribe(channel, subscriber);
      log.warnOnce(`channel:${channel}`, `${what} stopped after an error of pyro-run's (${reason(error)}); the app is not affected`);
    }
  };
  channels.subscribe(channel, subscriber);
}
