import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Child } from './child.js';
import { freePort } from './local-server.js';

export const REDIS_SERVER = '/usr/bin/redis-server';

export interface Redis {
  /** redis://127.0.0.1:<port> */
  readonly url: string;
  /** Stops the server and removes its folder. */
  stop(): Promise<void>;
}

/** A throwaway Redis on 127.0.0.1 (Debian's redis-server), nothing persisted, ready once it says so. */
export async function startRedis(): Promise<Redis> {
  if (!existsSync(REDIS_SERVER)) throw new Error(`Redis is not installed (no ${REDIS_SERVER}): run \`apt-get install -y redis-server\``);
  const dir = mkdtempSync(path.join(tmpdir(), 'pyro-run-redis-'));
  const port = await freePort();
  const server = new Child(
    spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const stop = async () => {
    server.process.kill('SIGTERM');
    await server.exit(30_000).catch(() => server.process.kill('SIGKILL'));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await server.line(/Ready to accept connections/, 30_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `redis://127.0.0.1:${port}`, stop };
}
