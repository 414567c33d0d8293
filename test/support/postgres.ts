import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { freePort, serverDir } from './local-server.js';

const INSTALL_ROOT = '/usr/lib/postgresql';
/** The Debian package's system user: PostgreSQL refuses to run as root. */
const SERVICE_USER = 'postgres';

export interface Postgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres, no password (trust auth, loopback only). */
  readonly url: string;
  /** Stops the server and removes its data directory. */
  stop(): Promise<void>;
}

/** The bin folder of the newest PostgreSQL installed the Debian way (/usr/lib/postgresql/<major>/bin), if any. */
export function postgresBinDir(): string | undefined {
  const majors = existsSync(INSTALL_ROOT) ? readdirSync(INSTALL_ROOT).filter((v) => /^\d+$/.test(v)) : [];
  return majors
    .sort((a, b) => Number(b) - Number(a))
    .map((major) => path.join(INSTALL_ROOT, major, 'bin'))
    .find((bin) => existsSync(path.join(bin, 'initdb')) && existsSync(path.join(bin, 'pg_ctl')));
}

function binDir(): string {
  const found = postgresBinDir();
  if (!found) throw new Error(`PostgreSQL is not installed (no ${INSTALL_ROOT}/*/bin/initdb): run \`apt-get install -y postgresql\``);
  return found;
}

/**
 * A throwaway PostgreSQL on 127.0.0.1 in a temp dir: initdb, then `pg_ctl start -w`, which returns
 * only once the server accepts connections (so no polling). Durability is off: the data dies with
 * the test. As root, every PostgreSQL command runs as the `postgres` user, who owns the temp dir.
 */
export async function startPostgres(): Promise<Postgres> {
  const bin = binDir();
  const { dir, tool } = await serverDir('pyro-run-pg-', SERVICE_USER);
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'server.log');
  const pg = (name: string, args: string[]) => tool(path.join(bin, name), args);

  let started = false;
  const stop = async () => {
    try {
      if (started) await pg('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    } finally {
      started = false;
      rmSync(dir, { recursive: true, force: true });
    }
  };

  try {
    await pg('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync']);
    const port = await freePort();
    const options = [`-p ${port}`, `-k ${dir}`, '-c listen_addresses=127.0.0.1', '-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off'];
    started = true;
    await pg('pg_ctl', ['-D', data, '-l', log, '-w', '-t', '60', '-o', options.join(' '), 'start']);
    return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop };
  } catch (error) {
    const serverLog = existsSync(log) ? readFileSync(log, 'utf8') : '(no server log)';
    await stop().catch(() => undefined);
    throw new Error(`could not start PostgreSQL from ${bin}: ${(error as Error).message}\n${serverLog}`, { cause: error });
  }
}
