// Starting a server app as a contender: pinned to the app core, ready when it prints
// `listening <port>` (the line the apps and the repo's fixtures print once they accept).
import { APP_CORE } from './cores.mjs';
import { NODE, contenderArgs, contenderEnv } from './contenders.mjs';
import { start } from './proc.mjs';

/** `pinned: false` leaves the app free to run its threads on every core. */
export async function launchApp(contender, file, { sinkUrl, node = NODE[24], nodeFlags = [], env, extraEnv = {}, timeoutMs = 30_000, pinned = true } = {}) {
  const handle = start(node, contenderArgs(contender, file, nodeFlags), {
    env: env ?? contenderEnv(contender, sinkUrl, extraEnv),
    core: pinned ? APP_CORE : undefined,
    name: contender.id,
  });
  try {
    const { match } = await handle.line(/^listening (\d+)$/, timeoutMs);
    return { handle, url: `http://127.0.0.1:${match[1]}` };
  } catch (error) {
    await handle.stop('SIGKILL');
    throw error;
  }
}
