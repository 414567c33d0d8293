/**
 * The report page's script, inlined into the HTML (the page opens from file:// with no network and
 * no library). It reads the aggregates from the `report-data` JSON element and draws the tables and
 * a DOM flame graph: root on top, children heaviest first, widths proportional to total value (time,
 * or bytes in use for the memory profile, which is per process: it has no endpoint or span view).
 * A run with worker threads can be drawn for all of them or one (`data.threads`, the trees' `threads`).
 * Text only ever goes in through textContent, so function and span names cannot inject markup.
 * Elements carry data-testid hooks and data-* values (name, total, self, depth) for tests.
 */
export const PAGE_SCRIPT = String.raw`
(() => {
  'use strict';
  const data = JSON.parse(document.getElementById('report-data').textContent);
  /** Height of a flame graph row, px (matches .frame height plus its border). */
  const ROW = 20;
  /** Frames narrower than this (and so everything above them) are not drawn. */
  const MIN_PX = 0.5;
  /** The profile types of the table (src/profiling/profile-types.ts), by name. */
  const KINDS = Object.fromEntries(data.kinds.map((k) => [k.kind, k]));
  const kindLabel = (kind) => KINDS[kind].title;
  /** The types a toggle is shown for: the per-span ones always, the others when the run holds them. */
  const shownKinds = data.kinds.filter((k) => k.perSpan || k.recorded).map((k) => k.kind);

  const byTestId = (id) => document.querySelector('[data-testid="' + id + '"]');

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes || {})) {
      if (value !== undefined && value !== null) node.setAttribute(key, String(value));
    }
    for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    return node;
  }

  // Same rules as src/report/format.ts, so the page and the terminal summary agree.
  function trim(value) {
    if (value >= 100) return String(Math.round(value));
    if (value >= 10) return value.toFixed(1);
    return value.toFixed(2);
  }
  function formatDuration(ns) {
    if (ns <= 0) return '0';
    if (ns < 1e6) return Math.round(ns / 1e3) + 'µs';
    if (ns < 1e9) return trim(ns / 1e6) + 'ms';
    if (ns < 60e9) return trim(ns / 1e9) + 's';
    const seconds = Math.round(ns / 1e9);
    return Math.floor(seconds / 60) + 'm' + String(seconds % 60).padStart(2, '0') + 's';
  }
  function formatPercent(part, whole) {
    if (whole <= 0) return '0%';
    const percent = (part / whole) * 100;
    if (percent > 0 && percent < 1) return '<1%';
    return Math.round(percent) + '%';
  }
  function formatBytes(bytes) {
    if (bytes <= 0) return '0';
    if (bytes < 1024) return Math.round(bytes) + 'B';
    if (bytes < 1024 ** 2) return trim(bytes / 1024) + 'KB';
    if (bytes < 1024 ** 3) return trim(bytes / 1024 ** 2) + 'MB';
    return trim(bytes / 1024 ** 3) + 'GB';
  }
  const formatValue = (kind, value) => (KINDS[kind].unit === 'bytes' ? formatBytes(value) : formatDuration(value));
  const formatCount = (n) => n.toLocaleString('en-US');
  /** Epoch ms → "2026-11-29 22:15:04.000" (UTC: the same clock as span timestamps). */
  const formatTime = (ms) => (Number.isFinite(ms) ? new Date(ms).toISOString().replace('T', ' ').replace('Z', '') : '?');

  const frameName = (f) => (f < 0 ? 'all' : data.strings[data.frames.name[f]]);
  const frameFile = (f) => (f < 0 ? '' : data.strings[data.frames.file[f]]);
  function frameWhere(f) {
    const file = frameFile(f);
    if (!file) return '';
    const line = f < 0 ? 0 : data.frames.line[f];
    return line ? file + ':' + line : file;
  }

  /** A self-time entry's function, with the app's function it ran for when it is not the app's own code: \`writev ← listArticles (articles.js:41)\`. */
  function selfName(t) {
    if (t.caller === undefined || t.caller === null) return frameName(t.frame);
    const where = frameWhere(t.caller).replace(/^.*[\\/]/, '');
    return frameName(t.frame) + ' ← ' + frameName(t.caller) + (where ? ' (' + where + ')' : '');
  }

  /** Warm hues for the app's code, cool for Node internals and dependencies, grey for V8's pseudo-frames. */
  function colorOf(f) {
    if (f < 0) return 'hsl(220, 12%, 82%)';
    const name = frameName(f);
    const file = frameFile(f);
    if (!file && /^\(.*\)$/.test(name)) return 'hsl(220, 8%, 76%)';
    let hash = 0;
    for (let i = 0; i < name.length; i++) hash = (hash * 31 + name.charCodeAt(i)) >>> 0;
    if (file.startsWith('node:') || /[\\/]node_modules[\\/]/.test(file)) return 'hsl(' + (190 + (hash % 40)) + ', 55%, 74%)';
    return 'hsl(' + (5 + (hash % 45)) + ', 82%, ' + (58 + (hash % 12)) + '%)';
  }

  const sampleCount = (kind) => data.share[kind].insideSamples + data.share[kind].outsideSamples;
  const state = {
    // CPU first, unless only wall time was recorded.
    kind: sampleCount('cpu') === 0 && sampleCount('wall') > 0 ? 'wall' : 'cpu',
    view: { type: 'process', index: -1 },
    /** Index into data.threads, or -1 for all threads. */
    thread: -1,
    zoom: 0,
    search: '',
  };

  /** Per tree: each node's x offset (in value units), parent, and the end of its pre-order subtree. */
  const layouts = new WeakMap();
  function layout(tree) {
    let cached = layouts.get(tree);
    if (cached) return cached;
    const n = tree.frame.length;
    const x = new Float64Array(n);
    const parent = new Int32Array(n).fill(-1);
    const end = new Int32Array(n).fill(n);
    const cursor = [0];
    const open = [];
    for (let i = 0; i < n; i++) {
      const depth = tree.depth[i];
      while (open.length > depth) end[open.pop()] = i;
      parent[i] = depth > 0 ? open[depth - 1] : -1;
      x[i] = cursor[depth] || 0;
      cursor[depth] = x[i] + tree.total[i];
      cursor[depth + 1] = x[i];
      open.push(i);
    }
    cached = { x, parent, end };
    layouts.set(tree, cached);
    return cached;
  }

  /** Per all-threads tree, each thread's own (built on first use). */
  const threadTrees = new WeakMap();
  /**
   * One thread's tree from the thread's values on an all-threads tree (its nodes, in the tree's
   * pre-order), siblings re-ordered heaviest first by the thread's own time, so the rest of the
   * page draws, zooms and searches it like any tree.
   */
  function threadTree(tree, thread) {
    let perThread = threadTrees.get(tree);
    if (!perThread) threadTrees.set(tree, (perThread = []));
    if (perThread[thread]) return perThread[thread];
    const values = tree.threads ? tree.threads[thread] : null;
    // A thread with no sample in the view gets an empty root: drawn as "no samples".
    let own = { frame: [-1], depth: [0], self: [0], total: [0] };
    if (values) {
      const nodes = { frame: values.node.map((i) => tree.frame[i]), depth: values.node.map((i) => tree.depth[i]), self: values.self, total: values.total };
      const { end } = layout(nodes);
      own = { frame: [], depth: [], self: [], total: [] };
      const open = [0];
      while (open.length > 0) {
        const i = open.pop();
        own.frame.push(nodes.frame[i]);
        own.depth.push(nodes.depth[i]);
        own.self.push(nodes.self[i]);
        own.total.push(nodes.total[i]);
        const children = [];
        for (let child = i + 1; child < end[i]; child = end[child]) children.push(child);
        // Heaviest first on screen, so pushed last; equal weights keep the all-threads order.
        children.sort((a, b) => nodes.total[a] - nodes.total[b] || b - a);
        for (const child of children) open.push(child);
      }
    }
    perThread[thread] = own;
    return own;
  }

  function currentTree() {
    const trees = data.trees;
    let tree = trees.process[state.kind];
    if (state.view.type === 'endpoint') tree = trees.endpoints[state.view.index][state.kind];
    if (state.view.type === 'span') tree = trees.slowest[state.view.index][state.kind];
    if (state.view.type === 'request') tree = trees.requests[state.view.index][state.kind];
    return state.thread < 0 ? tree : threadTree(tree, state.thread);
  }

  /** ' · worker 1 thread' when one thread is picked, else ''. */
  const threadSuffix = () => (state.thread < 0 ? '' : ' · ' + data.threads[state.thread].name + ' thread');

  function viewTitle() {
    if (state.view.type === 'endpoint') return 'Endpoint ' + data.endpoints[state.view.index].name;
    if (state.view.type === 'span') {
      const span = data.slowest[state.view.index];
      return 'Span ' + span.name + ' (' + formatDuration(span.durationNs) + ', trace ' + span.traceId + ')';
    }
    if (state.view.type === 'request') {
      const waterfall = data.endpoints[state.view.index].waits.waterfall;
      return 'Slowest request of ' + data.endpoints[state.view.index].name + ' (' + formatDuration(waterfall.durationNs) + ')';
    }
    return 'Whole process';
  }

  function renderHeader() {
    const run = data.run;
    document.title = 'pyro-run report: ' + (run.service || 'recording');
    byTestId('run-title').textContent = 'pyro-run report: ' + (run.service || 'recording');
    const started = run.startedAt ? formatTime(Date.parse(run.startedAt)) + ' UTC' : 'unknown start';
    const ended = run.endedAt ? formatTime(Date.parse(run.endedAt)) + ' UTC' : 'still running, or killed before it could finish';
    const meta = byTestId('run-meta');
    meta.append(
      el('p', { class: 'meta' }, run.dir),
      el('p', { class: 'meta' }, started + ' → ' + ended + (run.pid !== undefined ? ' · pid ' + run.pid : '') + (run.nodeVersion ? ' · Node ' + run.nodeVersion : '')),
      el('p', { class: 'meta' }, (run.command.length ? run.command.join(' ') + ' · ' : '') + formatCount(run.windows) + ' profile windows · ' + formatCount(run.spans) + ' spans'),
    );
    if (run.partial) meta.append(el('p', { class: 'meta warning', 'data-testid': 'partial' }, 'Partial: ' + run.partial));
    const share = byTestId('share');
    share.append('Samples inside spans: ');
    const parts = [];
    for (const kind of shownKinds.filter((k) => KINDS[k].perSpan)) {
      const s = data.share[kind];
      const whole = s.inside + s.outside;
      if (whole <= 0) continue;
      const part = el('span', { 'data-kind': kind }, el('strong', {}, formatPercent(s.inside, whole)), ' of ' + kindLabel(kind) + ' time (' + formatCount(s.insideSamples) + ' of ' + formatCount(s.insideSamples + s.outsideSamples) + ' samples)');
      if (s.unmatched > 0) part.append(', ' + formatPercent(s.unmatched, whole) + ' ' + data.run.unmatchedWords);
      parts.push(part);
    }
    if (parts.length === 0) share.append('no profile samples recorded');
    parts.forEach((part, i) => share.append(...(i > 0 ? [' · ', part] : [part])));
    renderThreadShares();
    if (run.otherThreadsCpu && run.otherThreadsCpu.cpuNs > 0) meta.append(el('p', { class: 'meta', 'data-testid': 'other-threads' }, run.otherThreadsCpu.words));
    for (const snapshot of data.snapshots) {
      const top = snapshot.topSelf.slice(0, 3).map((t) => frameName(t.frame) + ' ' + formatPercent(t.value, snapshot.total)).join(', ');
      meta.append(el('p', { class: 'meta', 'data-testid': 'snapshot', 'data-kind': snapshot.kind }, 'Memory in use ' + (snapshot.outOfMemoryAt ? 'when the heap limit was hit (' + snapshot.outOfMemoryAt + ')' : 'at the last window') + ': ' + formatValue(snapshot.kind, snapshot.total) + (top ? ', allocated in ' + top : '')));
    }
  }

  /** How the work split between the threads (by wall time when no CPU was recorded), as the terminal summary says it. */
  function renderThreadShares() {
    const threads = data.threads;
    if (!threads) return;
    const cpu = threads.reduce((n, t) => n + t.cpuNs, 0);
    const valueOf = (t) => (cpu > 0 ? t.cpuNs : t.wallNs);
    const whole = threads.reduce((n, t) => n + valueOf(t), 0);
    if (whole <= 0) return;
    const line = byTestId('threads');
    line.append((cpu > 0 ? 'CPU' : 'Wall') + ' time by thread: ');
    threads.forEach((t, i) => line.append(...(i > 0 ? [' · '] : []), el('span', { 'data-thread': t.name }, t.name + ' ', el('strong', {}, formatPercent(valueOf(t), whole)))));
    line.hidden = false;
  }

  function selectRow(row) {
    for (const selected of document.querySelectorAll('tbody tr[aria-selected="true"]')) selected.setAttribute('aria-selected', 'false');
    if (row) row.setAttribute('aria-selected', 'true');
  }

  function selectView(view, row) {
    state.view = view;
    if (view.type === 'endpoint') renderWaits(view.index);
    // A profile without spans (memory in use) has only the whole-process view.
    if (view.type !== 'process' && !KINDS[state.kind].perSpan) state.kind = shownKinds.find((k) => KINDS[k].perSpan) || 'cpu';
    state.zoom = 0;
    selectRow(row);
    renderFlame();
  }

  function clickableRow(testId, attributes, cells, onSelect) {
    const row = el('tr', Object.assign({ 'data-testid': testId, tabindex: 0, 'aria-selected': 'false' }, attributes), ...cells);
    row.addEventListener('click', () => onSelect(row));
    row.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        onSelect(row);
      }
    });
    return row;
  }

  const numCell = (text) => el('td', { class: 'num' }, text);

  function renderEndpoints() {
    const body = byTestId('endpoints').querySelector('tbody');
    if (data.endpoints.length === 0) {
      body.append(el('tr', { class: 'empty-row' }, el('td', { colspan: 8 }, 'No local-root spans recorded.')));
      return;
    }
    data.endpoints.forEach((endpoint, index) => {
      const self = endpoint.topSelf.map((t) => selfName(t) + ' ' + formatPercent(t.value, endpoint.cpuNs)).join(', ');
      const cells = [
        el('td', { class: 'name', title: endpoint.name }, endpoint.name || '(unnamed)'),
        numCell(formatCount(endpoint.count)),
        numCell(formatDuration(endpoint.p50Ns)),
        numCell(formatDuration(endpoint.p95Ns)),
        numCell(formatDuration(endpoint.maxNs)),
        numCell(formatDuration(endpoint.cpuNs)),
        numCell(formatDuration(endpoint.wallNs)),
        el('td', { class: 'self', title: self }, self || '-'),
      ];
      body.append(clickableRow('endpoint-row', { 'data-index': index, 'data-name': endpoint.name }, cells, (row) => selectView({ type: 'endpoint', index }, row)));
    });
  }

  const CATEGORY_TITLES = { database: 'database', http: 'HTTP', other: 'other call', internal: 'internal', request: 'request' };

  /** The endpoint's mean request as a bar and a line, its calls, its repeated call, its slowest request's waterfall. */
  function renderWaits(index) {
    const endpoint = data.endpoints[index];
    const section = byTestId('waits');
    const waits = endpoint.waits;
    section.hidden = !waits;
    if (!waits) return;
    byTestId('waits-title').textContent = endpoint.name;
    byTestId('waits-requests').textContent = '(mean of ' + formatCount(waits.requests) + ' request' + (waits.requests === 1 ? '' : 's') + ' kept; CPU spent inside a call counts in both)';
    const parts = [
      ['cpu', 'CPU', waits.cpuNs],
      ['workers', "workers' CPU", waits.workerCpuNs],
      ['database', 'database', waits.databaseNs],
      ['http', 'HTTP calls', waits.httpNs],
      ['other', 'other calls', waits.otherCallsNs],
      ['rest', 'neither', waits.restNs],
    ].filter(([, , ns]) => ns > 0);
    const whole = parts.reduce((n, [, , ns]) => n + ns, 0);
    const bar = byTestId('waits-bar');
    bar.replaceChildren(
      ...parts.map(([part, title, ns]) => {
        const segment = el('span', { class: 'part-' + part, 'data-part': part, title: title + ' ' + formatDuration(ns) });
        segment.style.width = (whole > 0 ? (ns / whole) * 100 : 0) + '%';
        return segment;
      }),
    );
    const calls = waits.databaseCallsP50 > 0 ? ' (' + waits.databaseCallsP50 + ' database call' + (waits.databaseCallsP50 === 1 ? '' : 's') + ' a request, at most ' + waits.databaseCallsMax + ')' : '';
    byTestId('waits-text').textContent = formatDuration(waits.durationNs) + ' a request: ' + parts.map(([part, title, ns]) => title + ' ' + formatDuration(ns) + (part === 'database' ? calls : '')).join(' · ');
    const owners = endpoint.byOwner.filter((o) => o.value > 0);
    const cpuWhole = owners.reduce((n, o) => n + o.value, 0);
    byTestId('by-owner').textContent = owners.length === 0 ? '' : 'CPU by whose code ran: ' + owners.map((o) => o.owner + ' ' + formatPercent(o.value, cpuWhole)).join(' · ');
    const repeated = waits.repeated;
    const flag = byTestId('repeated');
    flag.hidden = !repeated;
    flag.textContent = repeated ? 'Repeated in one request: ' + repeated.text + ' — run up to ' + repeated.perRequestMax + ' times in a request (p50 ' + repeated.perRequestP50 + '); one query for all of them would save most of its ' + formatDuration(repeated.totalNs / waits.requests) + ' a request.' : '';
    const body = byTestId('calls').querySelector('tbody');
    body.replaceChildren(
      ...(waits.calls.length === 0
        ? [el('tr', { class: 'empty-row' }, el('td', { colspan: 7 }, 'No calls under its requests (no CLIENT spans).'))]
        : waits.calls.map((c) =>
            el(
              'tr',
              { 'data-testid': 'call-row', 'data-category': c.category, 'data-repeated': c.repeated ? 'true' : 'false' },
              el('td', { class: 'name', title: c.text }, c.text),
              el('td', {}, CATEGORY_TITLES[c.category] + (c.repeated ? ' · repeated' : '')),
              numCell(String(c.perRequestP50)),
              numCell(String(c.perRequestMax)),
              numCell(formatCount(c.count)),
              numCell(formatDuration(c.totalNs)),
              numCell(formatDuration(c.p95Ns)),
            ),
          )),
    );
    renderWaterfall(index, waits.waterfall);
  }

  function renderWaterfall(index, waterfall) {
    const box = byTestId('waterfall');
    byTestId('waterfall-title').textContent = '(' + formatDuration(waterfall.durationNs) + '; select a span for the request\'s flame graph' + (waterfall.more > 0 ? '; ' + formatCount(waterfall.more) + ' more spans not drawn' : '') + ')';
    const whole = Math.max(waterfall.durationNs, 1);
    box.replaceChildren(
      ...waterfall.spans.map((span) => {
        const name = el('span', { class: 'wf-name', title: span.name }, span.name || '(unnamed)');
        name.style.paddingLeft = span.depth * 14 + 'px';
        const bar = el('span', { class: 'wf-bar part-' + span.category });
        bar.style.left = (span.offsetNs / whole) * 100 + '%';
        bar.style.width = (span.durationNs / whole) * 100 + '%';
        const row = el(
          'div',
          { class: 'wf-row', tabindex: 0, 'data-testid': 'waterfall-span', 'data-category': span.category, 'data-depth': span.depth, title: CATEGORY_TITLES[span.category] + ' · starts at ' + formatDuration(span.offsetNs) },
          name,
          el('span', { class: 'wf-track' }, bar),
          el('span', { class: 'wf-num' }, formatDuration(span.durationNs)),
          el('span', { class: 'wf-num', title: 'CPU of the samples labelled with this span' }, span.cpuNs > 0 ? 'CPU ' + formatDuration(span.cpuNs) : ''),
        );
        const open = () => selectView({ type: 'request', index }, null);
        row.addEventListener('click', open);
        row.addEventListener('keydown', (event) => {
          if (event.key === 'Enter' || event.key === ' ') {
            event.preventDefault();
            open();
          }
        });
        return row;
      }),
    );
  }

  function renderSpans() {
    const body = byTestId('spans').querySelector('tbody');
    if (data.slowest.length === 0) {
      body.append(el('tr', { class: 'empty-row' }, el('td', { colspan: 8 }, 'No spans recorded.')));
      return;
    }
    data.slowest.forEach((span, index) => {
      const endpoint = data.endpoints[span.endpoint];
      const cells = [
        el('td', { class: 'name', title: span.name }, span.name || '(unnamed)'),
        el('td', { class: 'name' }, endpoint ? endpoint.name : ''),
        numCell(formatDuration(span.durationNs)),
        numCell(formatDuration(span.cpuNs)),
        numCell(formatDuration(span.wallNs)),
        numCell(span.statusCode === undefined || span.statusCode === null ? '' : String(span.statusCode)),
        el('td', {}, formatTime(span.startMs)),
        el('td', { class: 'trace' }, span.traceId),
      ];
      body.append(clickableRow('span-row', { 'data-index': index, 'data-span-id': span.spanId, 'data-name': span.name }, cells, (row) => selectView({ type: 'span', index }, row)));
    });
  }

  /** Narrower frames get no label: a letter and an ellipsis say nothing and cost layout time. */
  const LABEL_MIN_PX = 18;

  function frameElement(tree, node, left, width, ancestor, pixels) {
    const f = tree.frame[node];
    const frame = el(
      'div',
      {
        class: ancestor ? 'frame ancestor' : 'frame',
        'data-testid': 'flame-frame',
        'data-node': node,
        'data-name': frameName(f),
        'data-total': tree.total[node],
        'data-self': tree.self[node],
        'data-depth': tree.depth[node],
        'data-ancestor': ancestor ? 'true' : undefined,
      },
      (width / 100) * pixels >= LABEL_MIN_PX ? frameName(f) : '',
    );
    frame.style.left = left + '%';
    frame.style.width = width + '%';
    frame.style.top = tree.depth[node] * ROW + 'px';
    frame.style.background = colorOf(f);
    return frame;
  }

  function renderFlame() {
    const box = byTestId('flame-graph');
    const tree = currentTree();
    byTestId('flame-title').textContent = viewTitle() + ' · ' + kindLabel(state.kind) + threadSuffix();
    box.replaceChildren();
    box.dataset.kind = state.kind;
    box.dataset.view = state.view.type;
    box.dataset.thread = state.thread < 0 ? 'all' : data.threads[state.thread].name;
    for (const button of document.querySelectorAll('[data-testid="type-toggle"] button')) {
      button.setAttribute('aria-pressed', String(button.dataset.kind === state.kind));
      button.disabled = state.view.type !== 'process' && !KINDS[button.dataset.kind].perSpan;
    }
    byTestId('view-process').disabled = state.view.type === 'process';
    if (tree.total[0] <= 0) {
      box.style.height = '';
      delete box.dataset.zoomRoot;
      box.append(el('div', { class: 'flame-empty', 'data-testid': 'flame-empty' }, 'No ' + kindLabel(state.kind) + ' samples in this view' + (state.thread < 0 ? '' : ' on the ' + data.threads[state.thread].name + ' thread') + '.'));
      byTestId('flame-reset').disabled = true;
      applySearch();
      return;
    }
    const { x, parent, end } = layout(tree);
    const zoom = state.zoom < tree.frame.length ? state.zoom : 0;
    const zoomTotal = tree.total[zoom];
    const pixels = box.clientWidth || 1000;
    const fragment = document.createDocumentFragment();
    // The zoomed frame's ancestors stay on top, full width: clicking one zooms back out to it.
    for (let a = parent[zoom]; a >= 0; a = parent[a]) fragment.append(frameElement(tree, a, 0, 100, true, pixels));
    let maxDepth = tree.depth[zoom];
    for (let i = zoom; i < end[zoom]; ) {
      const width = tree.total[i] / zoomTotal;
      if (width * pixels < MIN_PX) {
        i = end[i];
        continue;
      }
      fragment.append(frameElement(tree, i, ((x[i] - x[zoom]) / zoomTotal) * 100, width * 100, false, pixels));
      if (tree.depth[i] > maxDepth) maxDepth = tree.depth[i];
      i++;
    }
    box.style.height = (maxDepth + 1) * ROW + 'px';
    box.dataset.zoomRoot = frameName(tree.frame[zoom]);
    box.dataset.zoomNode = String(zoom);
    box.append(fragment);
    byTestId('flame-reset').disabled = zoom === 0;
    applySearch();
  }

  function matches(tree, node, term) {
    const f = tree.frame[node];
    return f >= 0 && (frameName(f).toLowerCase().includes(term) || frameWhere(f).toLowerCase().includes(term));
  }

  /** Highlights drawn frames matching the search and sums the matched time (outermost matches only, so nothing counts twice). */
  function applySearch() {
    const box = byTestId('flame-graph');
    const term = state.search.trim().toLowerCase();
    const info = byTestId('flame-matches');
    box.classList.toggle('searching', term !== '');
    const tree = currentTree();
    for (const frame of box.querySelectorAll('.frame')) {
      const hit = term !== '' && matches(tree, Number(frame.dataset.node), term);
      frame.classList.toggle('match', hit);
      if (hit) frame.dataset.match = 'true';
      else delete frame.dataset.match;
    }
    if (term === '' || tree.total[0] <= 0) {
      info.textContent = '';
      return;
    }
    const { end } = layout(tree);
    const zoom = state.zoom < tree.frame.length ? state.zoom : 0;
    let matched = 0;
    for (let i = zoom; i < end[zoom]; ) {
      if (matches(tree, i, term)) {
        matched += tree.total[i];
        i = end[i];
      } else i++;
    }
    info.textContent = matched > 0 ? 'Matched ' + formatValue(state.kind, matched) + ' (' + formatPercent(matched, tree.total[zoom]) + ' of this view)' : 'No match';
  }

  function showTooltip(event) {
    const tip = byTestId('flame-tooltip');
    const target = event.target instanceof Element ? event.target.closest('.frame') : null;
    if (!target) {
      tip.hidden = true;
      return;
    }
    const tree = currentTree();
    const node = Number(target.dataset.node);
    const f = tree.frame[node];
    const whole = tree.total[0];
    tip.replaceChildren(
      el('div', { class: 'tip-name' }, frameName(f)),
      el('div', { class: 'tip-file' }, frameWhere(f) || (f < 0 ? viewTitle() : 'no source location')),
      el('div', {}, 'Total: ' + formatValue(state.kind, tree.total[node]) + ' (' + formatPercent(tree.total[node], whole) + ')'),
      el('div', {}, 'Self: ' + formatValue(state.kind, tree.self[node]) + ' (' + formatPercent(tree.self[node], whole) + ')'),
    );
    tip.hidden = false;
    const margin = 14;
    const left = Math.min(event.clientX + margin, window.innerWidth - tip.offsetWidth - 4);
    const top = event.clientY + margin + tip.offsetHeight > window.innerHeight ? event.clientY - tip.offsetHeight - margin : event.clientY + margin;
    tip.style.left = Math.max(4, left) + 'px';
    tip.style.top = Math.max(4, top) + 'px';
  }

  function renderToggle() {
    const toggle = byTestId('type-toggle');
    for (const kind of shownKinds) {
      const title = kindLabel(kind);
      toggle.append(el('button', { type: 'button', 'data-kind': kind, 'data-testid': 'type-' + kind, 'aria-pressed': 'false' }, title.charAt(0).toUpperCase() + title.slice(1)));
    }
  }

  /** The thread picker, for a run with worker threads: all of them, or one. */
  function renderThreadSelect() {
    if (!data.threads) return;
    const select = byTestId('thread-select');
    select.append(el('option', { value: -1 }, 'All threads'), ...data.threads.map((t, i) => el('option', { value: i }, t.name)));
    select.hidden = false;
  }

  function bindFlame() {
    const box = byTestId('flame-graph');
    box.addEventListener('click', (event) => {
      const target = event.target instanceof Element ? event.target.closest('.frame') : null;
      if (!target) return;
      state.zoom = Number(target.dataset.node);
      renderFlame();
    });
    box.addEventListener('mousemove', showTooltip);
    box.addEventListener('mouseleave', () => (byTestId('flame-tooltip').hidden = true));
    byTestId('flame-reset').addEventListener('click', () => {
      state.zoom = 0;
      renderFlame();
    });
    byTestId('view-process').addEventListener('click', () => selectView({ type: 'process', index: -1 }, null));
    byTestId('flame-search').addEventListener('input', (event) => {
      state.search = event.target.value;
      applySearch();
    });
    for (const button of document.querySelectorAll('[data-testid="type-toggle"] button')) {
      button.addEventListener('click', () => {
        if (state.kind === button.dataset.kind) return;
        state.kind = button.dataset.kind;
        // Node indices differ between the trees of two types, so a zoom does not carry over.
        state.zoom = 0;
        renderFlame();
      });
    }
    byTestId('thread-select').addEventListener('change', (event) => {
      state.thread = Number(event.target.value);
      // A thread's tree has nodes of its own, so a zoom does not carry over.
      state.zoom = 0;
      renderFlame();
    });
    let pending = 0;
    window.addEventListener('resize', () => {
      cancelAnimationFrame(pending);
      pending = requestAnimationFrame(renderFlame);
    });
  }

  renderHeader();
  renderEndpoints();
  renderSpans();
  renderToggle();
  renderThreadSelect();
  bindFlame();
  renderFlame();
  document.body.dataset.ready = 'true';
})();
`;
