import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Child } from './child.js';
import { freePort } from './local-server.js';

/** Debian's rabbitmq-server: the real start script, not /usr/sbin's wrapper (that one runs the node as the rabbitmq user out of /var/lib/rabbitmq). */
export const RABBITMQ_SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server';
/** Erlang's port mapper, which a RabbitMQ node registers its name with. */
const EPMD = '/usr/bin/epmd';

export interface RabbitMq {
  /** amqp://guest:guest@127.0.0.1:<port> (guest may log in over loopback). */
  readonly url: string;
  /** Stops the broker and its port mapper, and removes their folder. */
  stop(): Promise<void>;
}

/**
 * A throwaway RabbitMQ on 127.0.0.1 in a temp dir, ready once it says so (about 6 s): its own
 * port mapper (epmd) on a free port, so nothing outlives the test; its node name, database, logs,
 * Erlang cookie and (no) plugins in the temp dir, none of the machine's own configuration read.
 */
export async function startRabbitMq(): Promise<RabbitMq> {
  if (!existsSync(RABBITMQ_SERVER)) throw new Error(`RabbitMQ is not installed (no ${RABBITMQ_SERVER}): run \`apt-get install -y rabbitmq-server\``);
  const dir = mkdtempSync(path.join(tmpdir(), 'pyro-run-rabbitmq-'));
  const [port, distPort, epmdPort] = [await freePort(), await freePort(), await freePort()];
  const file = (name: string, text?: string) => {
    const at = path.join(dir, name);
    if (text !== undefined) writeFileSync(at, text);
    return at;
  };
  // -d: it says when it listens.
  const epmd = new Child(spawn(EPMD, ['-d', '-port', String(epmdPort)], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] }));
  const env = {
    PATH: process.env.PATH,
    HOME: dir,
    ERL_EPMD_PORT: String(epmdPort),
    RABBITMQ_NODENAME: `pyro-run-${port}@localhost`,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    // The port mapper is ours: the node must not start one of its own, which would stay.
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '-start_epmd false',
    RABBITMQ_LOGS: '-',
    RABBITMQ_MNESIA_BASE: file('mnesia'),
    RABBITMQ_LOG_BASE: file('log'),
    RABBITMQ_PID_FILE: file('pid'),
    RABBITMQ_PLUGINS_EXPAND_DIR: file('plugins-expand'),
    RABBITMQ_FEATURE_FLAGS_FILE: file('feature-flags'),
    RABBITMQ_QUORUM_DIR: file('quorum'),
    RABBITMQ_STREAM_DIR: file('stream'),
    RABBITMQ_ENABLED_PLUGINS_FILE: file('enabled_plugins', '[].\n'),
    RABBITMQ_CONFIG_FILE: file('rabbitmq.conf', ''),
    RABBITMQ_ADVANCED_CONFIG_FILE: file('advanced.config'),
    RABBITMQ_CONF_ENV_FILE: file('rabbitmq-env.conf'),
  };
  let server: Child | undefined;
  const stop = async () => {
    if (server !== undefined) {
      // The start script stops the Erlang node it runs, and waits for it; if it does not, the
      // whole process group goes (the node is the script's child).
      const group = -(server.process.pid ?? 0);
      server.process.kill('SIGTERM');
      await server.exit(30_000).catch(() => process.kill(group, 'SIGKILL'));
    }
    epmd.process.kill('SIGTERM');
    await epmd.exit(10_000).catch(() => epmd.process.kill('SIGKILL'));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await epmd.line(/epmd running/, 10_000, 'stderr');
    server = new Child(spawn(RABBITMQ_SERVER, [], { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] }));
    await server.line(/Server startup complete/, 60_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `amqp://guest:guest@127.0.0.1:${port}`, stop };
}
