/**
 * The docs name the source files that do each thing: every file they name exists, so a move or a
 * split that forgets the docs fails here.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../support/child.js';

/** A file name in backticks, with or without its folders: `span-link/linking.ts`, `otel.cjs`. */
const NAMED_FILE = /`((?:[\w.-]+\/)*[\w.-]+\.(?:ts|mts|cts|mjs|cjs|js))`/g;
const SKIPPED_DIRS = new Set(['node_modules', '.git', 'pyro-run-data', 'test-artifacts']);

function filesUnder(dir: string, relative = ''): string[] {
  return readdirSync(path.join(dir, relative), { withFileTypes: true }).flatMap((entry) => {
    const child = relative === '' ? entry.name : `${relative}/${entry.name}`;
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : filesUnder(dir, child);
    return [child];
  });
}

/** compatibility.md names the files of the third-party suites it ran, not ours. */
const OF_OTHER_PROJECTS = new Set(['compatibility.md']);
const docs = [
  'README.md',
  ...readdirSync(path.join(repoRoot, 'docs'))
    .filter((name) => name.endsWith('.md') && !OF_OTHER_PROJECTS.has(name))
    .map((name) => `docs/${name}`),
];
const files = filesUnder(repoRoot);

for (const doc of docs) {
  test(`every source file ${doc} names exists`, () => {
    const named = new Set([...readFileSync(path.join(repoRoot, doc), 'utf8').matchAll(NAMED_FILE)].map((match) => match[1] ?? ''));
    const missing = [...named].filter((name) => !files.some((file) => file === name || file.endsWith(`/${name}`)));
    assert.deepEqual(missing, [], `${doc} names files that do not exist`);
  });
}
