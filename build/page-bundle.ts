/**
 * Build step (after tsc): bundles the report page's script, src/report/page/main.ts and what it
 * imports (the page's modules, and the pure ones it shares with the text summary: format.ts,
 * wait-parts.ts, …), into one browser script, dist/page/report.js (src/report/page-script.ts names
 * it), which html.ts inlines into every report. tsc checks those sources with the DOM's types
 * (src/report/page/tsconfig.json); esbuild only strips the types.
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
import { PAGE_SCRIPT_URL } from '../src/report/page-script.js';

const require = createRequire(import.meta.url);
const esbuild = require('esbuild') as typeof import('esbuild');

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const pageDir = path.join(repoRoot, 'src', 'report', 'page');
const outfile = fileURLToPath(PAGE_SCRIPT_URL);

async function main(): Promise<void> {
  rmSync(path.dirname(outfile), { recursive: true, force: true });
  await esbuild.build({
    entryPoints: [path.join(pageDir, 'main.ts')],
    outfile,
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2020',
    charset: 'utf8',
    tsconfig: path.join(pageDir, 'tsconfig.json'),
    legalComments: 'none',
    logLevel: 'warning',
  });
  const script = readFileSync(outfile, 'utf8');
  const unsafe = /<\/script|<!--/i.exec(script);
  if (unsafe)
    throw new Error(`${path.relative(repoRoot, outfile)} holds ${unsafe[0]}, which would end or confuse the <script> element the report inlines it in`);
}

await main();
