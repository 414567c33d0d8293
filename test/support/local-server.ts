import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

export const run = promisify(execFile);

/** A loopback port nobody listens on now (database servers cannot be asked for port 0). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface ServerDir {
  /** The temp dir, owned by the service user when the tests run as root. */
  dir: string;
  /** Runs a server tool as the service user when the tests run as root (database servers refuse root), else as is. */
  tool(binary: string, args: string[]): ReturnType<typeof run>;
}

/** A temp dir for a throwaway server run by Debian's package `user` (postgres, mysql). */
export async function serverDir(prefix: string, user: string): Promise<ServerDir> {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const id = async (flag: '-u' | '-g') => Number((await run('id', [flag, user])).stdout.trim());
    chownSync(dir, await id('-u'), await id('-g'));
  }
  // cwd: the service user may not be allowed into the test's own working directory.
  const tool = (binary: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', user, '--', binary, ...args], { cwd: dir }) : run(binary, args, { cwd: dir });
  return { dir, tool };
}
