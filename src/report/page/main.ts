/**
 * The report page's script (build/page-bundle.ts bundles it; html.ts inlines it: the page opens
 * from file:// with no network and no library). It reads the aggregates from the `report-data`
 * JSON element and draws the tables (endpoints, slowest spans, event-loop blocks), an endpoint's
 * waits and a DOM flame graph. A run with worker threads can be drawn for all of them or one. Elements carry data-testid hooks for tests; the
 * body's data-ready says the page is drawn.
 */
import { renderBlocks } from './blocks-section.js';
import { bindFlame, renderThreadSelect, renderToggle } from './controls.js';
import { renderFlame } from './flame.js';
import { renderHeader } from './header.js';
import { renderEndpoints, renderSpans } from './tables.js';

renderHeader();
renderEndpoints();
renderSpans();
renderBlocks();
renderToggle();
renderThreadSelect();
bindFlame();
renderFlame();
document.body.dataset.ready = 'true';
