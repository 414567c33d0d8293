/**
 * Build step (after tsc): bundles each page's script with what it imports (the pages' modules,
 * and the pure ones they share with the terminal's text: format.ts, wait-parts.ts, …) into one
 * browser script each (src/report/page-script.ts names them): src/report/page/main.ts into
 * dist/page/report.js, which html.ts inlines into every report, and src/report/page/diff/main.ts
 * into dist/page/diff.js, the diff page's (src/diff/diff-html.ts). tsc checks those sources with
 * the DOM's types (src/report/page/tsconfig.json); esbuild only strips the types.
 *
 * - Built for the browser: an import of a Node module fails the build.
 * - An IIFE, so nothing it declares lands on the page's globals.
 * - Left readable (not minified): it is a small part of a report, and whoever opens one with the
 *   browser's tools reads the page's own code.
 * - Inlined in a <script> element, it must hold no `</script` and no `<!--`: the build fails on either.
 *
 * Usage: node dist/build/page-bundle.js
 */
import { createRequire } from 'node:module';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DIFF_PAGE_SCRIPT_URL, PAGE_SCRIPT_URL } from '../src/report/page-script.js';

const require = createRequire(import.meta.url);
const esbuild = require('esbuild') as typeof import('esbuild');

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const pageDir = path.join(repoRoot, 'src', 'report', 'page');
/** Each page's script and its entry module. */
const PAGES = [
  { url: PAGE_SCRIPT_URL, entry: path.join(pageDir, 'main.ts') },
  { url: DIFF_PAGE_SCRIPT_URL, entry: path.join(pageDir, 'diff', 'main.ts') },
];
const outfiles = PAGES.map(({ url }) => fileURLToPath(url));
const outdir = path.dirname(outfiles[0] as string);

async function main(): Promise<void> {
  if (outfiles.some((file) => path.dirname(file) !== outdir)) throw new Error("the pages' scripts must share one folder");
  rmSync(outdir, { recursive: true, force: true });
  await esbuild.build({
    // Named by their scripts' names, so each lands where page-script.ts reads it.
    entryPoints: PAGES.map(({ url, entry }) => ({ in: entry, out: path.basename(fileURLToPath(url), '.js') })),
    outdir,
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2020',
    charset: 'utf8',
    tsconfig: path.join(pageDir, 'tsconfig.json'),
    legalComments: 'none',
    logLevel: 'warning',
  });
  for (const outfile of outfiles) {
    const unsafe = /<\/script|<!--/i.exec(readFileSync(outfile, 'utf8'));
    if (unsafe)
      throw new Error(`${path.relative(repoRoot, outfile)} holds ${unsafe[0]}, which would end or confuse the <script> element its page inlines it in`);
  }
}

await main();
