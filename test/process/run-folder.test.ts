/**
 * Run folders: their names, created exclusively so two processes never share one (two replicas
 * that are both PID 1 and start in the same second ask for the same name), and folder creation
 * that fails with the kernel's reason instead of Node's ENOENT.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { createRunFolder, ensureFolder } from '../../src/export/local/run-folder.js';
import { runFolderName } from '../../src/recording.js';
import { repoRoot } from '../support/child.js';
import { scratchDirs } from '../support/scratch.js';

const { fresh: tempDir } = scratchDirs('pyro-run-folder-');

const STARTED = new Date('2026-11-29T22:15:03.120Z');

describe('run folder names', () => {
  const cases: { name: string; args: Parameters<typeof runFolderName>; expected: string }[] = [
    { name: 'service, UTC date and time to the second, pid', args: ['checkout', STARTED, 4242], expected: 'checkout-20261129-221503-4242' },
    { name: 'the first attempt has no suffix', args: ['checkout', STARTED, 1, 1], expected: 'checkout-20261129-221503-1' },
    { name: 'later attempts add one', args: ['checkout', STARTED, 1, 2], expected: 'checkout-20261129-221503-1-2' },
    { name: 'characters unsafe in a folder name become _', args: ['@acme/check out', STARTED, 7], expected: '_acme_check_out-20261129-221503-7' },
    { name: 'an empty service name still names a folder', args: ['', STARTED, 7], expected: 'service-20261129-221503-7' },
  ];
  for (const c of cases) it(c.name, () => assert.equal(runFolderName(...c.args), c.expected));
});

describe('a run folder is created exclusively: a name that is taken is never shared', () => {
  it('two runs with the same service, second and pid get two folders; the second gets a suffix', () => {
    const base = tempDir();
    const first = createRunFolder(base, 'replica', STARTED, 1);
    const second = createRunFolder(base, 'replica', STARTED, 1);
    assert.equal(path.basename(first), 'replica-20261129-221503-1');
    assert.equal(path.basename(second), 'replica-20261129-221503-1-2');
    for (const dir of [first, second]) assert.deepEqual(readdirSync(dir).sort(), ['profiles', 'spans']);
  });

  it("a folder of that name made by someone else (another replica's run) is left as it is", () => {
    const base = tempDir();
    const taken = path.join(base, 'replica-20261129-221503-1');
    mkdirSync(taken);
    writeFileSync(path.join(taken, 'run.json'), '{"theirs":true}');
    const dir = createRunFolder(base, 'replica', STARTED, 1);
    assert.equal(path.basename(dir), 'replica-20261129-221503-1-2');
    assert.deepEqual(readdirSync(taken), ['run.json']);
    assert.equal(readFileSync(path.join(taken, 'run.json'), 'utf8'), '{"theirs":true}');
  });

  it('a file of that name is skipped too', () => {
    const base = tempDir();
    writeFileSync(path.join(base, 'replica-20261129-221503-1'), 'not a folder');
    writeFileSync(path.join(base, 'replica-20261129-221503-1-2'), 'not a folder');
    assert.equal(path.basename(createRunFolder(base, 'replica', STARTED, 1)), 'replica-20261129-221503-1-3');
  });

  it('the output folder and its parents are made as needed', () => {
    const base = path.join(tempDir(), 'a', 'b', 'recordings');
    const dir = createRunFolder(base, 'svc', STARTED, 9);
    assert.equal(path.dirname(dir), base);
  });
});

describe('making a folder fails with the real reason', () => {
  const code = (fn: () => void) => {
    try {
      fn();
    } catch (error) {
      return (error as NodeJS.ErrnoException).code;
    }
    return 'no error';
  };

  it('a folder that exists is fine; a file in the way is EEXIST, not success', () => {
    const base = tempDir();
    ensureFolder(base);
    writeFileSync(path.join(base, 'file'), '');
    assert.equal(
      code(() => ensureFolder(path.join(base, 'file'))),
      'EEXIST',
    );
    assert.equal(
      code(() => ensureFolder(path.join(base, 'file', 'sub'))),
      'ENOTDIR',
    );
  });

  // Root ignores permission bits; /sys refuses new folders even to root.
  const readOnly = process.getuid?.() === 0 ? (process.platform === 'linux' ? '/sys' : undefined) : 'chmod';
  it('inside a folder we may not write: EACCES, EPERM or EROFS, never ENOENT', {
    skip: readOnly === undefined ? 'running as root on a system without /sys: no folder refuses root here' : false,
  }, () => {
    let parent = '/sys';
    if (readOnly === 'chmod') {
      parent = tempDir();
      chmodSync(parent, 0o555);
    }
    assert.match(String(code(() => ensureFolder(path.join(parent, `pyro-run-test-${process.pid}`, 'recordings')))), /^(EACCES|EPERM|EROFS)$/);
  });

  it('under /proc it fails at once (Node’s recursive mkdir spins there forever)', { skip: process.platform !== 'linux' && '/proc is Linux’s' }, () => {
    const module = pathToFileURL(path.join(repoRoot, 'dist/src/export/local/run-folder.js')).href;
    const script = `import { ensureFolder } from ${JSON.stringify(module)}; try { ensureFolder('/proc/self/pyro-run-test/x'); } catch (e) { console.log(e.code); }`;
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 10_000 });
    assert.equal(result.signal, null, 'it returned before the timeout');
    assert.equal(result.stdout.trim(), 'ENOENT');
  });
});
