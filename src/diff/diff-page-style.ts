/** What the diff page adds to the report page's stylesheet (page-style.ts): the metric cells, the legend, and the marks of frames only one run has. */
export const DIFF_PAGE_STYLE = `
td.metric { line-height: 1.3; }
td.metric .change.beyond, td.verdict.beyond { font-weight: 600; }
td.metric .change.slower { color: #b42318; }
td.metric .change.faster { color: #1d4ed8; }
td.metric .interval { color: var(--muted); font-size: 12px; }
.footnote { white-space: pre-wrap; font-size: 12px; margin-top: 6px; }
.legend { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 14px; margin: 8px 0; color: var(--muted); }
.legend-item { display: inline-flex; align-items: center; gap: 5px; color: var(--fg); }
.swatch { display: inline-block; width: 26px; height: 14px; border-radius: 3px; border: 1px solid var(--line); }
/* A frame only one run has is hatched over its colour, so it reads apart from a mere change. */
[data-change="new"] { background-image: repeating-linear-gradient(45deg, rgba(255, 255, 255, 0.45) 0 3px, transparent 3px 7px); }
[data-change="gone"] { background-image: repeating-linear-gradient(-45deg, rgba(29, 35, 48, 0.22) 0 2px, transparent 2px 6px); }
.frame[data-change="gone"] { color: #475467; font-style: italic; }
`;
