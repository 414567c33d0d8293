/**
 * The pages' scripts: the TypeScript under src/report/page/, which build/page-bundle.ts bundles
 * for the browser into dist/page/: report.js (html.ts inlines it into every report) and diff.js
 * (the diff page's, src/diff/diff-html.ts). Each is read once from there.
 */
import { readFileSync } from 'node:fs';

export const PAGE_SCRIPT_URL = new URL('../../page/report.js', import.meta.url);
export const DIFF_PAGE_SCRIPT_URL = new URL('../../page/diff.js', import.meta.url);

const scripts = new Map<string, string>();

function scriptAt(url: URL): string {
  let script = scripts.get(url.href);
  if (script === undefined) scripts.set(url.href, (script = readFileSync(url, 'utf8')));
  return script;
}

export const pageScript = (): string => scriptAt(PAGE_SCRIPT_URL);

export const diffPageScript = (): string => scriptAt(DIFF_PAGE_SCRIPT_URL);
