/**
 * The report as ONE self-contained HTML file (page-html.ts): styles, script and data inline, so it
 * opens from file://, can be mailed or attached to a ticket, and makes no network request.
 */
import { renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RunAggregates } from './aggregate.js';
import { selfContainedPage } from './page-html.js';
import { pageScript } from './page-script.js';
import { PAGE_STYLE } from './page-style.js';

const BODY = `
<header>
  <h1 data-testid="run-title">pyro-run report</h1>
  <div data-testid="run-meta"></div>
  <p class="share" data-testid="share"></p>
  <p class="share" data-testid="threads" hidden></p>
</header>
<main>
  <h2>Endpoints <span class="meta">(local-root spans by name; select one for its flame graph)</span></h2>
  <div class="table-wrap">
    <table data-testid="endpoints">
      <thead><tr>
        <th>Endpoint</th><th class="num">Count</th><th class="num">p50</th><th class="num">p95</th><th class="num">Max</th>
        <th class="num">CPU</th><th class="num">Wall</th><th>Top self time (CPU)</th>
      </tr></thead>
      <tbody></tbody>
    </table>
  </div>
  <section data-testid="waits" hidden>
    <h2>Where the time went: <span data-testid="waits-title"></span> <span class="meta" data-testid="waits-requests"></span></h2>
    <div class="waits-bar" data-testid="waits-bar"></div>
    <p class="meta" data-testid="waits-text"></p>
    <p class="meta" data-testid="by-owner"></p>
    <p class="warning" data-testid="repeated" hidden></p>
    <div class="table-wrap">
      <table data-testid="calls">
        <thead><tr>
          <th>Call <span class="meta">(statement shape, or method and host)</span></th><th>Kind</th><th class="num">Per request p50</th><th class="num">Max</th>
          <th class="num">Count</th><th class="num">Total</th><th class="num">p95</th>
        </tr></thead>
        <tbody></tbody>
      </table>
    </div>
    <h3>Its slowest request <span class="meta" data-testid="waterfall-title"></span></h3>
    <div class="waterfall" data-testid="waterfall"></div>
  </section>
  <h2>Slowest spans <span class="meta">(spans that carry profile samples, longest first)</span></h2>
  <div class="table-wrap">
    <table data-testid="spans">
      <thead><tr>
        <th>Span</th><th>Endpoint</th><th class="num">Duration</th><th class="num">CPU</th><th class="num">Wall</th>
        <th class="num">Status</th><th>Start (UTC)</th><th>Trace ID</th>
      </tr></thead>
      <tbody></tbody>
    </table>
  </div>
  <section data-testid="blocks-section" hidden>
    <h2>Event-loop blocks <span class="meta" data-testid="blocks-meta"></span></h2>
    <p class="meta" data-testid="blocked-by"></p>
    <div class="table-wrap">
      <table data-testid="blocks">
        <thead><tr>
          <th class="num">Duration</th><th>Span (endpoint)</th><th>Where (the app's code)</th><th class="num">Samples of the span</th>
          <th>Start (UTC)</th><th>Trace ID</th>
        </tr></thead>
        <tbody></tbody>
      </table>
    </div>
  </section>
  <h2>Flame graph</h2>
  <div class="toolbar">
    <span class="flame-title" data-testid="flame-title"></span>
  </div>
  <div class="toolbar">
    <div class="segmented" role="group" aria-label="Profile type" data-testid="type-toggle"></div>
    <select aria-label="Thread" data-testid="thread-select" hidden></select>
    <button type="button" class="plain" data-testid="view-process">Whole process</button>
    <button type="button" class="plain" data-testid="flame-reset">Reset zoom</button>
    <input type="search" placeholder="Search functions or files" aria-label="Search frames" data-testid="flame-search">
    <span class="matches" data-testid="flame-matches"></span>
  </div>
  <div class="flame" data-testid="flame-graph"></div>
  <div class="tooltip" data-testid="flame-tooltip" hidden></div>
</main>`;

/** The page for these aggregates (which must include trees). */
export function renderReportHtml(aggregates: RunAggregates): string {
  if (aggregates.trees === undefined) throw new Error('renderReportHtml needs aggregates built with trees');
  return selfContainedPage({ title: 'pyro-run report', style: PAGE_STYLE, body: BODY, dataId: 'report-data', data: aggregates, script: pageScript() });
}

/** Writes the page to `file` through a temporary name, so a reader never opens half a report. */
export function writeReportHtml(aggregates: RunAggregates, file: string): void {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.tmp`);
  writeFileSync(temporary, renderReportHtml(aggregates));
  renameSync(temporary, file);
}
