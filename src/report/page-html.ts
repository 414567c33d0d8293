/**
 * One self-contained HTML page, as the report (html.ts) and the diff page (src/diff/diff-html.ts)
 * are: styles, script and data inline, so it opens from file://, can be mailed, attached to a
 * ticket or kept as a CI artifact, and makes no network request (the Content-Security-Policy
 * forbids any).
 */

const CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'";

/** JSON safe inside a <script> element: `</script>` or `<!--` in a function name must not end it. */
function embedJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

export interface PageParts {
  title: string;
  style: string;
  /** The body's markup, before the data and the script. */
  body: string;
  /** The id of the JSON element the script reads `data` from. */
  dataId: string;
  data: unknown;
  /** The page's bundled script (page-script.ts). */
  script: string;
}

export function selfContainedPage(parts: PageParts): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${parts.title}</title>
<style>${parts.style}</style>
</head>
<body>${parts.body}
<script type="application/json" id="${parts.dataId}">${embedJson(parts.data)}</script>
<script>${parts.script}</script>
</body>
</html>
`;
}
