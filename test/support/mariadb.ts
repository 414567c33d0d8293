import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Child } from './child.js';
import { freePort, serverDir } from './local-server.js';

export const MARIADB_SERVER = '/usr/sbin/mariadbd';
const INSTALL_DB = '/usr/bin/mariadb-install-db';
/** The Debian package's system user: mariadbd refuses to run as root. */
const SERVICE_USER = 'mysql';

export interface MariaDb {
  /** mysql://root@127.0.0.1:<port>/mysql, no password (grant tables off, loopback only). */
  readonly url: string;
  readonly port: number;
  /** Stops the server and removes its data directory. */
  stop(): Promise<void>;
}

/**
 * A throwaway MariaDB on 127.0.0.1 in a temp dir (Debian's mariadb-server): a fresh data dir, then
 * the server in the foreground, ready once it says so on stderr. No grant tables, no binary log,
 * no durability: the data dies with the test.
 */
export async function startMariaDb(): Promise<MariaDb> {
  if (!existsSync(MARIADB_SERVER)) throw new Error(`MariaDB is not installed (no ${MARIADB_SERVER}): run \`apt-get install -y mariadb-server\``);
  const { dir, tool } = await serverDir('pyro-run-mariadb-', SERVICE_USER);
  const data = path.join(dir, 'data');
  await tool(INSTALL_DB, ['--no-defaults', `--datadir=${data}`, '--auth-root-authentication-method=normal', '--skip-test-db']);
  const port = await freePort();
  const args = [
    '--no-defaults',
    `--datadir=${data}`,
    `--socket=${path.join(dir, 'sock')}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    '--skip-grant-tables',
    '--skip-log-bin',
    '--innodb-flush-log-at-trx-commit=0',
  ];
  const asRoot = process.getuid?.() === 0;
  const server = new Child(
    asRoot
      ? spawn('runuser', ['-u', SERVICE_USER, '--', MARIADB_SERVER, ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(MARIADB_SERVER, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  const stop = async () => {
    server.process.kill('SIGTERM');
    await server.exit(60_000).catch(() => server.process.kill('SIGKILL'));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await server.line(/ready for connections/, 60_000, 'stderr');
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `mysql://root@127.0.0.1:${port}/mysql`, port, stop };
}
