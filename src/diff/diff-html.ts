/**
 * `pyro-run diff --html`: the diff as ONE self-contained HTML page, as the report is
 * (page-html.ts): styles, script and data inline, so it opens from file://, can be kept as a CI
 * artifact, and makes no network request.
 */
import { selfContainedPage } from '../report/page-html.js';
import { diffPageScript } from '../report/page-script.js';
import { PAGE_STYLE } from '../report/page-style.js';
import { writeFileAtomicSync } from '../util/atomic-file.js';
import { DIFF_PAGE_STYLE } from './diff-page-style.js';
import type { DiffPageData } from './diff-page-data.js';

const BODY = `
<header>
  <h1 data-testid="diff-title">pyro-run diff</h1>
  <div data-testid="diff-runs"></div>
</header>
<main>
  <h2>Endpoints <span class="meta">(per request, before → after; select one for its diff flame graph)</span></h2>
  <div class="table-wrap">
    <table data-testid="diff-endpoints">
      <thead><tr>
        <th>Endpoint</th><th class="num">Requests</th><th>Verdict</th>
        <th class="num">CPU per request</th><th class="num">Wall per request</th><th class="num">p50 latency</th><th class="num">p95 latency</th>
      </tr></thead>
      <tbody></tbody>
    </table>
  </div>
  <div class="meta footnote" data-testid="diff-noise"></div>
  <h2>Diff flame graph</h2>
  <div class="toolbar">
    <span class="flame-title" data-testid="flame-title"></span>
  </div>
  <div class="toolbar">
    <div class="segmented" role="group" aria-label="Profile type" data-testid="type-toggle"></div>
    <button type="button" class="plain" data-testid="view-process">Whole process</button>
    <button type="button" class="plain" data-testid="flame-reset">Reset zoom</button>
  </div>
  <div class="legend" data-testid="diff-legend"></div>
  <div class="flame" data-testid="flame-graph"></div>
  <div class="tooltip" data-testid="flame-tooltip" hidden></div>
</main>`;

export function renderDiffHtml(data: DiffPageData): string {
  return selfContainedPage({ title: 'pyro-run diff', style: PAGE_STYLE + DIFF_PAGE_STYLE, body: BODY, dataId: 'diff-data', data, script: diffPageScript() });
}

/** Writes the page whole or not at all: a reader (a browser, a CI upload) never sees half of it. */
export function writeDiffHtml(data: DiffPageData, file: string): void {
  writeFileAtomicSync(file, renderDiffHtml(data));
}
