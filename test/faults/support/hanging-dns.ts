/**
 * The "resolver that never answers" fault: the faulty app runs with test/fixtures/faults/
 * hanging-dns.cjs, which makes lookups of one name hang the way getaddrinfo does on a dead
 * resolver (no answer, one libuv threadpool thread held per lookup; see the fixture for why it is a
 * simulation). The FIFO it blocks on lives in a temp folder of its own.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fixture } from '../../support/child.js';
import type { Armed } from './backend-faults.js';

/** `.invalid`: should the preload not be in effect, the real resolver fails at once, and the test sees ENOTFOUND instead of a timeout. */
const HOST = 'pyro-run-hanging-dns.invalid';

/** Why the fault cannot run here, if it cannot. */
export const hangingDnsUnavailable = process.platform === 'win32' ? 'no FIFOs to block a threadpool thread on Windows' : undefined;

export async function prepareHangingDns(): Promise<Armed> {
  const dir = mkdtempSync(path.join(tmpdir(), 'pyro-run-dns-'));
  const fifo = path.join(dir, 'resolver');
  execFileSync('mkfifo', [fifo]);
  return {
    url: `http://${HOST}:4040`,
    sinks: () => [],
    app: { nodeArgs: ['--require', fixture('faults/hanging-dns.cjs')], env: { PYRO_RUN_TEST_HANGING_HOST: HOST, PYRO_RUN_TEST_HANGING_FIFO: fifo } },
    verify: (stderr) => {
      const hanging = [...stderr.matchAll(/^hanging-dns: main lookup of \S+, (\d+) hanging$/gm)].map((m) => Number(m[1]));
      assert.ok(hanging.length > 0, `the app's uploads met the hanging resolver:\n${stderr}`);
      // The app has 4 threadpool threads for its fs, crypto and zlib work (every /work request
      // runs an async randomBytes on one); retries must not pile up lookups that each hold one.
      assert.ok(Math.max(...hanging) <= 1, `pyro-run held ${Math.max(...hanging)} threadpool threads with hanging lookups at once (at most 1 allowed)`);
    },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}
