/**
 * What a failed write of a recording says: for a folder that cannot be written, that it is
 * read-only (never a misleading ENOENT), which folder, and what to do.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeDiskError, isDiskFull } from '../../src/export/local/disk-error.js';

const fsError = (code: string, where = '/data/pyro-run-data') => Object.assign(new Error(`${code}: something, mkdir '${where}'`), { code, path: where });

describe('disk errors, in words that say what to do', () => {
  const cases: { name: string; error: unknown; folder?: string; expected: RegExp }[] = [
    {
      name: 'a read-only file system names the folder and --out',
      error: fsError('EROFS'),
      expected: /^\/data\/pyro-run-data is on a read-only file system \(EROFS\); record into a writable folder with --out <dir> \(PYRO_RUN_OUTPUT_DIR\)$/,
    },
    {
      name: 'no permission is read-only for this process',
      error: fsError('EACCES'),
      expected: /^\/data\/pyro-run-data is read-only for this process, no permission to write there \(EACCES\); record into a writable folder with --out <dir>/,
    },
    { name: 'EPERM too', error: fsError('EPERM'), expected: /read-only for this process.*\(EPERM\).*--out <dir>/ },
    { name: 'a full disk', error: fsError('ENOSPC'), expected: /^the disk holding \/data\/pyro-run-data is full \(ENOSPC\)$/ },
    { name: 'a quota', error: fsError('EDQUOT'), expected: /^the disk holding \/data\/pyro-run-data is full \(EDQUOT\)$/ },
    { name: 'a file where the folder should be', error: fsError('EEXIST'), expected: /^\/data\/pyro-run-data is a file, not a folder \(EEXIST\)/ },
    {
      name: 'the folder given names the place, not the temporary file',
      error: fsError('EROFS', '/data/run/.run.json.7-1a.tmp'),
      folder: '/data/run',
      expected: /^\/data\/run is on a read-only file system/,
    },
    { name: 'anything else: its own message', error: fsError('EIO'), expected: /^EIO: something/ },
    { name: 'not an fs error: its message', error: new Error('boom'), expected: /^boom$/ },
  ];
  for (const c of cases) it(c.name, () => assert.match(describeDiskError(c.error, c.folder), c.expected));

  it('full means ENOSPC or EDQUOT only', () => {
    assert.deepEqual(
      ['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES'].map((code) => isDiskFull(fsError(code))),
      [true, true, false, false],
    );
  });
});
