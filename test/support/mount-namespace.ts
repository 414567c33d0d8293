/**
 * A command run over a tmpfs of its own (`unshare --mount`, then `mount -t tmpfs`): a disk that
 * fills at a chosen size, or a read-only one, without touching the machine's mounts. The mount
 * lives in a private mount namespace and goes away with the command.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Child, childEnv } from './child.js';

/**
 * `sh -c` script: mount a tmpfs with `$OPTIONS` at `$MNT`, run the command in `$MNT` (its working
 * directory), then copy what it left into `$COPY` — the tmpfs vanishes with the namespace — and
 * exit with the command's code.
 */
const SCRIPT = 'mount -t tmpfs -o "$OPTIONS" pyro-run-test "$MNT" && cd "$MNT" && { "$@"; code=$?; cp -a "$MNT/." "$COPY/"; exit $code; }';

/** Why tmpfs mounts of our own cannot be made here (not root, no unshare, a sandbox forbids it), or undefined when they can. */
export function mountNamespaceUnavailable(): string | undefined {
  const dir = mkdtempSync(path.join(tmpdir(), 'pyro-run-mount-probe-'));
  try {
    const probe = spawnSync('unshare', ['--mount', '--', 'sh', '-c', 'mount -t tmpfs -o size=16k pyro-run-test "$0"', dir], {
      encoding: 'utf8',
      timeout: 10_000,
    });
    if (probe.error) return `unshare cannot run: ${probe.error.message}`;
    if (probe.status !== 0)
      return `a private tmpfs mount (unshare --mount, mount -t tmpfs) is not permitted here: ${probe.stderr.trim() || `exit ${probe.status}`}`;
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs `command` with a fresh tmpfs (`options`, e.g. `size=256k` or `ro`) mounted at `mnt` as its
 * working directory; what is on the tmpfs when it ends is copied into `copy`.
 */
export function runOnTmpfs(command: string[], options: { mnt: string; copy: string; mountOptions: string; env?: Record<string, string> }): Child {
  const env = childEnv({ ...options.env, MNT: options.mnt, COPY: options.copy, OPTIONS: options.mountOptions });
  return new Child(spawn('unshare', ['--mount', '--', 'sh', '-c', SCRIPT, 'sh', ...command], { env, stdio: ['ignore', 'pipe', 'pipe'] }));
}
