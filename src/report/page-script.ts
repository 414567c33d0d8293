/**
 * The report page's script: the TypeScript under src/report/page/, which build/page-bundle.ts
 * bundles for the browser into dist/page/report.js. html.ts inlines it into every report, read once
 * from there.
 */
import { readFileSync } from 'node:fs';

export const PAGE_SCRIPT_URL = new URL('../../page/report.js', import.meta.url);

let script: string | undefined;

export function pageScript(): string {
  script ??= readFileSync(PAGE_SCRIPT_URL, 'utf8');
  return script;
}
