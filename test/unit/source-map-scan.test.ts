/** Which app folders make pyro-run load the source mapper: only those that may hold maps. */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { mayHaveSourceMaps } from '../../src/profiling/source-map-scan.js';
import { scratchDirs } from '../support/scratch.js';

const { fresh } = scratchDirs('pyro-run-maps-');

/** Writes `files` (relative path → content) under a fresh folder and returns it. */
function tree(files: Record<string, string>): string {
  const dir = fresh();
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

const CODE = 'module.exports = 1;\n';
const CASES: [string, Record<string, string>, boolean][] = [
  ['plain JavaScript, no maps', { 'index.js': CODE, 'lib/a.mjs': CODE, 'lib/b.cjs': CODE }, false],
  ['a .js.map file next to the output', { 'dist/index.js': CODE, 'dist/index.js.map': '{}' }, true],
  ['an .mjs.map deep in the tree', { 'a/b/c/d.mjs': CODE, 'a/b/c/d.mjs.map': '{}' }, true],
  ['an inline map on the last line', { 'index.js': `${CODE}//# sourceMappingURL=data:application/json;base64,e30=\n` }, true],
  ['an annotation naming a map file', { 'out.cjs': `${CODE}//# sourceMappingURL=out.cjs.map` }, true],
  ['an annotation buried at the top of a long file', { 'index.js': `//# sourceMappingURL=x.js.map\n${'x'.repeat(4096)}\n` }, false],
  [
    'maps only inside node_modules',
    { 'index.js': CODE, 'node_modules/dep/index.js.map': '{}', 'node_modules/dep/index.js': `${CODE}//# sourceMappingURL=index.js.map` },
    false,
  ],
  ['maps only inside .git', { 'index.js': CODE, '.git/x.js.map': '{}' }, false],
  ['a map of something else (.css.map)', { 'index.js': CODE, 'style.css.map': '{}' }, false],
  ['an empty folder', {}, false],
];

for (const [name, files, expected] of CASES) {
  test(`source maps scan: ${name} → ${expected ? 'load the mapper' : 'skip it'}`, async () => {
    assert.equal(await mayHaveSourceMaps(tree(files)), expected);
  });
}

test('source maps scan: a folder that does not exist → skip', async () => {
  assert.equal(await mayHaveSourceMaps(path.join(fresh(), 'missing')), false);
});
