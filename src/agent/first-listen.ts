import diagnosticsChannel from 'node:diagnostics_channel';

/**
 * Published by Node inside `server.listen()`, before it returns (net's `net.server.listen` tracing
 * channel; Node 22, 24 and 26 publish it for every net, http, https and http2 server).
 */
const LISTEN_STARTS = 'tracing:net.server.listen:asyncStart';

/**
 * Runs `work` once, inside the first `listen()` of any server in the process: what a server needs
 * before its first connection is done while it starts listening (it cannot be connected to before
 * that call returns and the event loop turns), and a process that never serves — a script, a test
 * runner's worker, a queue consumer — never pays for it at start. `work` must not throw: the
 * channel would hand its error to the app's `uncaughtException`.
 */
export function onFirstListen(work: () => void): void {
  const channel = diagnosticsChannel.channel(LISTEN_STARTS);
  const once = (): void => {
    channel.unsubscribe(once);
    work();
  };
  channel.subscribe(once);
}
