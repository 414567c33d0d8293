/** The report page's stylesheet (inlined: the page opens from file:// with no network). */
export const PAGE_STYLE = `
:root {
  color-scheme: light;
  --fg: #1d2330;
  --muted: #667085;
  --line: #e4e7ec;
  --bg: #ffffff;
  --panel: #f8f9fb;
  --accent: #e0531f;
  --select: #fff1e8;
  --match: #d946ef;
  font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--fg);
  background: var(--bg);
}
body { margin: 0; padding: 16px 24px 48px; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 28px 0 8px; }
.meta { color: var(--muted); margin: 0 0 4px; }
.share { margin: 8px 0 0; }
.share strong { color: var(--fg); }
.warning { color: #b42318; }
h3 { font-size: 14px; margin: 16px 0 6px; }
.waits-bar { display: flex; height: 20px; border-radius: 4px; overflow: hidden; border: 1px solid var(--line); margin: 4px 0; }
.waits-bar > span { display: block; height: 100%; min-width: 1px; }
.part-cpu { background: #e0531f; }
.part-workers { background: #f59e0b; }
.part-database { background: #2563eb; }
.part-http { background: #7c3aed; }
.part-other { background: #0d9488; }
.part-rest { background: #d0d5dd; }
.part-internal { background: #98a2b3; }
.part-request { background: #1d2330; }
.waterfall { border: 1px solid var(--line); border-radius: 6px; max-height: 420px; overflow: auto; }
.wf-row { display: grid; grid-template-columns: minmax(200px, 30%) 1fr 90px 90px; gap: 8px; align-items: center; padding: 2px 8px; cursor: pointer; }
.wf-row:hover, .wf-row:focus { background: var(--select); outline: none; }
.wf-name { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.wf-track { position: relative; height: 12px; }
.wf-bar { position: absolute; top: 0; height: 12px; min-width: 1px; border-radius: 2px; }
.wf-num { text-align: right; font-variant-numeric: tabular-nums; color: var(--muted); }
.table-wrap { max-height: 360px; overflow: auto; border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; }
th, td { padding: 5px 10px; text-align: left; white-space: nowrap; border-bottom: 1px solid var(--line); }
th { position: sticky; top: 0; background: var(--panel); font-weight: 600; z-index: 1; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.name { max-width: 420px; overflow: hidden; text-overflow: ellipsis; }
td.self { color: var(--muted); max-width: 480px; overflow: hidden; text-overflow: ellipsis; }
tbody tr { cursor: pointer; }
tbody tr:hover { background: var(--panel); }
tbody tr[aria-selected="true"] { background: var(--select); box-shadow: inset 3px 0 0 var(--accent); }
tbody tr:focus-visible { outline: 2px solid var(--accent); outline-offset: -2px; }
.empty-row td { color: var(--muted); cursor: default; }
.toolbar { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px; margin: 8px 0; }
.segmented { display: inline-flex; border: 1px solid var(--line); border-radius: 6px; overflow: hidden; }
.segmented button { border: 0; border-right: 1px solid var(--line); background: var(--bg); padding: 5px 12px; font: inherit; cursor: pointer; }
.segmented button:last-child { border-right: 0; }
.segmented button[aria-pressed="true"] { background: var(--fg); color: var(--bg); }
button.plain { border: 1px solid var(--line); background: var(--bg); border-radius: 6px; padding: 5px 12px; font: inherit; cursor: pointer; }
button.plain:disabled { opacity: 0.5; cursor: default; }
select { font: inherit; padding: 4px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); }
select[hidden] { display: none; }
input[type="search"] { font: inherit; padding: 5px 8px; border: 1px solid var(--line); border-radius: 6px; min-width: 220px; }
.flame-title { font-weight: 600; }
.matches { color: var(--muted); }
.flame { position: relative; width: 100%; overflow: hidden; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); }
.frame {
  position: absolute; box-sizing: border-box; height: 19px; padding: 0 4px;
  font: 12px/19px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  white-space: nowrap; overflow: hidden; text-overflow: ellipsis;
  border-right: 1px solid var(--bg); border-bottom: 1px solid var(--bg);
  cursor: pointer; color: #1b1b1b;
}
.frame:hover { filter: brightness(0.9); }
.frame.ancestor { opacity: 0.55; }
.flame.searching .frame { opacity: 0.35; }
.flame.searching .frame.match { opacity: 1; background: var(--match) !important; color: #fff; }
.flame-empty { padding: 24px; color: var(--muted); }
.tooltip {
  position: fixed; z-index: 10; pointer-events: none; max-width: 560px;
  background: #111827; color: #f9fafb; border-radius: 6px; padding: 8px 10px; font-size: 12px;
  box-shadow: 0 4px 16px rgba(0, 0, 0, 0.25); white-space: pre-wrap; word-break: break-all;
}
.tooltip[hidden] { display: none; }
.tooltip .tip-name { font-weight: 600; }
.tooltip .tip-file { color: #cbd5e1; }
`;
