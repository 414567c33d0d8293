/**
 * Atomic writes: a reader sees a file whole or not at all, temporary names never collide between
 * processes, and a write that fails — a full disk takes the bytes up to the last block that fits —
 * leaves nothing behind. The full disk is simulated: fs.writeFileSync is replaced by one that
 * writes part of the bytes and then fails with ENOSPC, as the kernel does (test/local-mode-disk
 * fills a real tmpfs where the machine allows it).
 */
import assert from 'node:assert/strict';
import fs, { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { writeFileAtomicSync } from '../../src/util/atomic-file.js';
import { scratchDirs } from '../support/scratch.js';

const { fresh: tempDir } = scratchDirs('pyro-run-atomic-');

const diskFull = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });

it('a write that fails part-way on a full disk leaves no temporary file, and the previous file whole', (t) => {
  const dir = tempDir();
  const file = path.join(dir, 'run.json');
  writeFileSync(file, 'before');
  t.mock.method(fs, 'writeFileSync', (target: string, data: string) => {
    writeFileSync(target, data.slice(0, 4));
    throw diskFull();
  });
  assert.throws(() => writeFileAtomicSync(file, 'after, and longer'), { code: 'ENOSPC' });
  assert.deepEqual(readdirSync(dir), ['run.json']);
  assert.equal(readFileSync(file, 'utf8'), 'before');
});

it('a rename that fails leaves no temporary file either', (t) => {
  const dir = tempDir();
  t.mock.method(fs, 'renameSync', () => {
    throw Object.assign(new Error('EXDEV'), { code: 'EXDEV' });
  });
  assert.throws(() => writeFileAtomicSync(path.join(dir, 'a.jsonl'), 'x'), { code: 'EXDEV' });
  assert.deepEqual(readdirSync(dir), []);
});

it('temporary names are hidden from readers, carry the pid, and differ on every write', (t) => {
  const dir = tempDir();
  const temporary: string[] = [];
  t.mock.method(fs, 'writeFileSync', (target: string, data: string) => {
    temporary.push(path.basename(target));
    writeFileSync(target, data);
  });
  writeFileAtomicSync(path.join(dir, 'run.json'), '1');
  writeFileAtomicSync(path.join(dir, 'run.json'), '2');
  assert.equal(temporary.length, 2);
  assert.notEqual(temporary[0], temporary[1]);
  for (const name of temporary) assert.match(name, new RegExp(`^\\.run\\.json\\.${process.pid}-[0-9a-z]+\\.tmp$`));
  assert.deepEqual(readdirSync(dir), ['run.json']);
  assert.equal(readFileSync(path.join(dir, 'run.json'), 'utf8'), '2');
});
