/**
 * The diff page's script (build/page-bundle.ts bundles it; src/diff/diff-html.ts inlines it: the
 * page opens from file:// with no network and no library). It reads the diff from the `diff-data`
 * JSON element and draws the endpoints table and a diff flame graph — the endpoint that changed
 * most first — with the report's flame layout and drawing (../flame-layout.ts, ../flame-draw.ts).
 * Elements carry data-testid hooks for tests; the body's data-ready says the page is drawn.
 */
import { bindFlame, selectView } from './controls.js';
import { renderEndpoints } from './endpoints.js';
import { renderHeader } from './header.js';
import { renderLegend } from './legend.js';
import { state } from './state.js';

renderHeader();
renderEndpoints(selectView);
renderLegend();
bindFlame();
selectView(state.view);
document.body.dataset.ready = 'true';
