/**
 * Writing esbuild's output in ASCII. esbuild escapes strings, templates and regular expressions (its
 * `charset` default) but keeps the comments it keeps (legal comments, class fields' JSDoc) as
 * written: one `—` or `ä` there makes the whole file a two-byte string in V8, twice the memory for
 * the source V8 holds for as long as the process runs (and for the copy the code cache's loader
 * compiles, src/util/code-cache.ts). Those characters are written as escapes, which in a comment
 * read as what they stand for.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { OutputFile } from 'esbuild';

/** `text` with every character outside ASCII as a `\uXXXX` escape (UTF-16 units, each on its own). Pure. */
export function asciiComments(text: string): string {
  return text.replace(/[^\x00-\x7f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Writes a build's output files (built with `write: false`) in ASCII. */
export function writeAscii(outputFiles: readonly OutputFile[]): void {
  for (const { path: file, text } of outputFiles) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, asciiComments(text));
  }
}
