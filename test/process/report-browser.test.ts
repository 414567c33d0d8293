/**
 * The report page in a real headless Chromium, opened from file:// as users open it: it must work
 * offline (no request but the file itself, no console error), list the endpoints, and draw flame
 * graphs that zoom, search, show details on hover and switch between CPU and wall, and, for a run
 * with worker threads, between all threads and one.
 * Chromium comes from CHROMIUM_PATH or /usr/bin/chromium (CI installs it); without it these tests
 * skip, saying how to install it — but under CI=true they fail, so a CI machine that lost the
 * browser cannot pass for a working page (support/installed.ts).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { frames, launchBrowser, openReport } from '../support/browser.js';
import { runReport } from '../../src/cli/report.js';
import { nPlusOneRecording, SHOP, shopRecording, THREADS, threadsRecording } from '../support/recording.js';
import { skipUnless } from '../support/installed.js';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../../test-artifacts');
const MS = 1_000_000;
const TEST_TIMEOUT_MS = 60_000;

const base = mkdtempSync(path.join(tmpdir(), 'pyro-run-report-browser-'));
const skip = skipUnless('chromium');
let context: BrowserContext | undefined;
let reportUrl = '';
let threadsUrl = '';
let nPlusOneUrl = '';

/** Writes the run's report.html; returns its file:// URL. */
function writeReport(run: string): string {
  let stderr = '';
  const code = runReport([run], { stdout: () => undefined, stderr: (text) => void (stderr += text), cwd: base });
  assert.equal(code, 0, stderr);
  return pathToFileURL(path.join(run, 'report.html')).href;
}

before(async () => {
  reportUrl = writeReport(shopRecording(path.join(base, 'data')));
  threadsUrl = writeReport(threadsRecording(path.join(base, 'threads')));
  nPlusOneUrl = writeReport(nPlusOneRecording(path.join(base, 'n-plus-one')));
  // A fresh profile per run: nothing cached or remembered from an earlier session.
  if (skip) return;
  context = await launchBrowser(path.join(base, 'profile'));
});

after(async () => {
  await context?.close();
  rmSync(base, { recursive: true, force: true });
});

/** A new tab on the report, recording requests and console errors. */
const open = () => openReport(context, reportUrl);

const frameNamed = (page: Page, name: string) => page.locator(`[data-testid="flame-frame"][data-name="${name}"]:not([data-ancestor])`).first();
const graph = (page: Page) => page.locator('[data-testid="flame-graph"]');

describe('the report page', { timeout: TEST_TIMEOUT_MS, skip }, () => {
  it('opens from file:// and works offline: no request but the file, no console error', async () => {
    const { page, requests, errors } = await open();
    await page.click(`[data-testid="endpoint-row"][data-name="${SHOP.users.name}"]`);
    await page.click('[data-testid="type-wall"]');
    await page.click('[data-testid="span-row"] >> nth=0');
    await frameNamed(page, 'main').click();
    await page.fill('[data-testid="flame-search"]', 'fib');
    await frameNamed(page, 'main').hover();
    await page.waitForSelector('[data-testid="flame-tooltip"]:not([hidden])');
    assert.deepEqual(requests, [reportUrl]);
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('lists the endpoints, heaviest CPU first, with count, latency and CPU', async () => {
    const { page } = await open();
    const rows = page.locator('[data-testid="endpoint-row"]');
    assert.deepEqual(
      await rows.evaluateAll((elements) => elements.map((e) => (e as unknown as { dataset: Record<string, string | undefined> }).dataset.name)),
      [SHOP.users.name, SHOP.orders.name, SHOP.health.name],
    );
    const cells = await rows.first().locator('td').allTextContents();
    assert.deepEqual(cells.slice(0, 7), [SHOP.users.name, '4', '20.0ms', '100ms', '100ms', '131ms', '160ms']);
    assert.match(cells[7] as string, /^fib 92%/);
    assert.match((await page.textContent('[data-testid="share"]')) ?? '', /92% of CPU time/);
    await page.close();
  });

  it('selecting an endpoint draws its flame graph, the hot function among the widest frames', async () => {
    const { page } = await open();
    await page.click(`[data-testid="endpoint-row"][data-name="${SHOP.users.name}"]`);
    await page.waitForSelector('[data-testid="flame-graph"][data-view="endpoint"]');
    assert.equal(await page.getAttribute(`[data-testid="endpoint-row"][data-name="${SHOP.users.name}"]`, 'aria-selected'), 'true');
    assert.match((await page.textContent('[data-testid="flame-title"]')) ?? '', /GET \/users\/:id · CPU/);
    const drawn = await frames(page);
    const top = [...drawn].sort((a, b) => b.total - a.total).slice(0, 4);
    assert.deepEqual(
      top.map((f) => f.name),
      ['all', 'main', 'handleUser', SHOP.hotCpu],
    );
    assert.equal(top[0]?.total, SHOP.users.cpuMs * MS);
    assert.equal(top[3]?.total, 120 * MS);
    assert.ok(!drawn.some((f) => f.name === 'handleOrder'), 'another endpoint leaked into the graph');
    await page.close();
  });

  it('clicking a frame zooms into it (full width), and the root or Reset zoom goes back', async () => {
    const { page } = await open();
    const box = await graph(page).boundingBox();
    await frameNamed(page, 'handleUser').click();
    await page.waitForSelector('[data-testid="flame-graph"][data-zoom-root="handleUser"]');
    const zoomed = await frameNamed(page, 'handleUser').boundingBox();
    assert.ok(box && zoomed);
    assert.ok(Math.abs(zoomed.width - box.width) <= 3, `zoomed frame is ${zoomed.width}px wide, graph ${box.width}px`);
    const drawn = await frames(page);
    assert.deepEqual(
      drawn.filter((f) => f.ancestor).map((f) => f.name),
      ['main', 'all'],
    );
    assert.ok(!drawn.some((f) => !f.ancestor && f.name === 'handleOrder'), 'frames outside the zoomed one are still drawn');
    await page.click('[data-testid="flame-reset"]');
    await page.waitForSelector('[data-testid="flame-graph"][data-zoom-root="all"]');
    await frameNamed(page, 'fib').click();
    await page.waitForSelector('[data-testid="flame-graph"][data-zoom-root="fib"]');
    await page.click('[data-testid="flame-frame"][data-ancestor][data-name="all"]');
    await page.waitForSelector('[data-testid="flame-graph"][data-zoom-root="all"]');
    await page.close();
  });

  it('searching highlights the matching frames', async () => {
    const { page } = await open();
    await page.fill('[data-testid="flame-search"]', 'fib');
    await page.waitForSelector('[data-testid="flame-frame"][data-match="true"]');
    const drawn = await frames(page);
    assert.deepEqual([...new Set(drawn.filter((f) => f.match).map((f) => f.name))], ['fib']);
    assert.ok(drawn.some((f) => !f.match && f.name === 'main'));
    assert.match((await page.textContent('[data-testid="flame-matches"]')) ?? '', /^Matched 125ms \(68% of this view\)$/);
    // File names match too.
    await page.fill('[data-testid="flame-search"]', 'orders.ts');
    await page.waitForSelector('[data-testid="flame-frame"][data-name="validate"][data-match="true"]');
    await page.fill('[data-testid="flame-search"]', '');
    await page.waitForSelector('[data-testid="flame-frame"][data-match="true"]', { state: 'detached' });
    await page.close();
  });

  it('hovering a frame shows its total and self time and where it is defined', async () => {
    const { page } = await open();
    await frameNamed(page, 'fib').hover();
    const tip = page.locator('[data-testid="flame-tooltip"]:not([hidden])');
    await tip.waitFor();
    const text = (await tip.textContent()) ?? '';
    assert.match(text, /^fib/);
    assert.match(text, /src\/math\.ts:12/);
    assert.match(text, /Total: 125ms \(68%\)/);
    assert.match(text, /Self: 125ms \(68%\)/);
    await page.close();
  });

  it('the CPU/wall toggle switches the graph between CPU and wall time', async () => {
    const { page } = await open();
    const cpu = await frames(page);
    assert.ok(!cpu.some((f) => f.name === SHOP.hotWall));
    await page.click('[data-testid="type-wall"]');
    await page.waitForSelector('[data-testid="flame-graph"][data-kind="wall"]');
    assert.equal(await page.getAttribute('[data-testid="type-wall"]', 'aria-pressed'), 'true');
    const wall = await frames(page);
    assert.equal(wall.find((f) => f.name === 'all')?.total, (SHOP.wall.insideMs + SHOP.wall.outsideMs) * MS);
    assert.ok(wall.some((f) => f.name === SHOP.hotWall));
    assert.ok(wall.some((f) => f.name === '(idle: event loop, I/O, native code)'));
    await page.click('[data-testid="type-cpu"]');
    await page.waitForSelector('[data-testid="flame-graph"][data-kind="cpu"]');
    await page.close();
  });

  it("selecting a slow span draws that span's flame graph", async () => {
    const { page } = await open();
    const first = page.locator('[data-testid="span-row"]').first();
    assert.equal(await first.getAttribute('data-name'), SHOP.users.name);
    await first.click();
    await page.waitForSelector('[data-testid="flame-graph"][data-view="span"]');
    assert.match((await page.textContent('[data-testid="flame-title"]')) ?? '', /^Span GET \/users\/:id \(100ms, trace 0+4\) · CPU$/);
    assert.equal((await frames(page)).find((f) => f.name === 'all')?.total, 40 * MS);
    await page.click('[data-testid="type-wall"]');
    await page.waitForSelector('[data-testid="flame-graph"][data-kind="wall"]');
    assert.equal((await frames(page)).find((f) => f.name === SHOP.hotWall)?.total, 90 * MS);
    await page.click('[data-testid="view-process"]');
    await page.waitForSelector('[data-testid="flame-graph"][data-view="process"]');
    await page.close();
  });

  it('saves a screenshot of an endpoint view', async () => {
    const { page } = await open();
    await page.click(`[data-testid="endpoint-row"][data-name="${SHOP.users.name}"]`);
    await page.waitForSelector('[data-testid="flame-graph"][data-view="endpoint"]');
    await frameNamed(page, 'fib').hover();
    await page.waitForSelector('[data-testid="flame-tooltip"]:not([hidden])');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'report.png'), fullPage: true });
    assert.ok(existsSync(path.join(ARTIFACTS, 'report.png')));
    await page.close();
  });
});

describe('the thread picker', { timeout: TEST_TIMEOUT_MS, skip }, () => {
  const [w2, w10] = THREADS.workers;
  const pick = async (page: Page, name: string) => {
    await page.selectOption('[data-testid="thread-select"]', { label: name });
    await page.waitForSelector(`[data-testid="flame-graph"][data-thread="${name === 'All threads' ? 'all' : name}"]`);
  };
  const names = async (page: Page) => new Set((await frames(page)).filter((f) => !f.ancestor && f.name !== 'all').map((f) => f.name));
  const rootTotal = async (page: Page) => (await frames(page)).find((f) => f.name === 'all')?.total;

  it('is not shown for a run without worker threads', async () => {
    const { page } = await open();
    assert.equal(await page.isHidden('[data-testid="thread-select"]'), true);
    assert.equal(await page.isHidden('[data-testid="threads"]'), true);
    await page.close();
  });

  it("lists all threads, the main thread and each worker, and says each one's share of the CPU", async () => {
    const { page, errors } = await openReport(context, threadsUrl);
    assert.equal(await page.isVisible('[data-testid="thread-select"]'), true);
    assert.deepEqual(await page.locator('[data-testid="thread-select"] option').allTextContents(), ['All threads', ...THREADS.threadOrder]);
    assert.equal(await page.textContent('[data-testid="threads"]'), 'CPU time by thread: main 20% · worker 2 30% · worker 10 50%');
    assert.equal(await page.getAttribute('[data-testid="flame-graph"]', 'data-thread'), 'all');
    assert.deepEqual(errors, []);
    await page.close();
  });

  it("picking a worker draws that worker's frames only, for the process, an endpoint and every type", async () => {
    const { page, errors } = await openReport(context, threadsUrl);
    assert.ok((await names(page)).has('handleResize') && (await names(page)).has('resizeImage'), 'all threads drawn first');
    await pick(page, w10);
    assert.match((await page.textContent('[data-testid="flame-title"]')) ?? '', /^Whole process · CPU · worker 10 thread$/);
    assert.deepEqual([...(await names(page))].sort(), ['loadCodec', 'resizeImage', 'workerLoop']);
    assert.equal(await rootTotal(page), 50 * MS);
    assert.equal((await frames(page)).find((f) => f.name === 'resizeImage')?.total, 40 * MS);

    await page.click(`[data-testid="endpoint-row"][data-name="${THREADS.resize.name}"]`);
    await page.waitForSelector('[data-testid="flame-graph"][data-view="endpoint"]');
    assert.equal(await page.getAttribute('[data-testid="flame-graph"]', 'data-thread'), w10, 'the pick holds across views');
    assert.deepEqual([...(await names(page))].sort(), ['resizeImage', 'workerLoop']);
    assert.equal(await rootTotal(page), 40 * MS);

    await pick(page, w2);
    assert.deepEqual([...(await names(page))].sort(), ['encodePng', 'resizeImage', 'workerLoop']);
    assert.equal(await rootTotal(page), 30 * MS);
    // Heaviest first on this thread: encodePng (20 ms) left of resizeImage (10 ms), the other way round from all threads.
    const encodePng = await frameNamed(page, 'encodePng').boundingBox();
    const resizeImage = await frameNamed(page, 'resizeImage').boundingBox();
    assert.ok(encodePng && resizeImage && encodePng.x < resizeImage.x && encodePng.width > resizeImage.width, JSON.stringify({ encodePng, resizeImage }));

    await page.click('[data-testid="type-wall"]');
    await page.waitForSelector('[data-testid="flame-graph"][data-kind="wall"]');
    assert.equal(await rootTotal(page), 25 * MS);
    assert.deepEqual([...(await names(page))].sort(), ['resizeImage', 'workerLoop']);

    await pick(page, THREADS.main);
    assert.ok(
      [...(await names(page))].every((name) => (THREADS.mainFrames as readonly string[]).includes(name)),
      [...(await names(page))].join(', '),
    );
    assert.equal(await rootTotal(page), 10 * MS);

    await pick(page, 'All threads');
    assert.equal(await rootTotal(page), THREADS.resize.wallMs * MS);
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('a thread with nothing in the view says so; picking a thread resets the zoom', async () => {
    const { page } = await openReport(context, threadsUrl);
    await frameNamed(page, 'workerLoop').click();
    await page.waitForSelector('[data-testid="flame-graph"][data-zoom-root="workerLoop"]');
    await pick(page, w10);
    assert.equal(await page.getAttribute('[data-testid="flame-graph"]', 'data-zoom-root'), 'all');
    await page.click(`[data-testid="endpoint-row"][data-name="${THREADS.health.name}"]`);
    await page.waitForSelector('[data-testid="flame-empty"]');
    assert.equal(await page.textContent('[data-testid="flame-empty"]'), 'No CPU samples in this view on the worker 10 thread.');
    await page.close();
  });
});

describe('where the time went', { timeout: TEST_TIMEOUT_MS, skip }, () => {
  it("an endpoint's mean request, its calls with the repeated statement flagged, and its slowest request as a waterfall that opens the request's flame graph", async () => {
    const { page, errors } = await openReport(context, nPlusOneUrl);
    assert.equal(await page.locator('[data-testid="waits"]').isHidden(), true, 'nothing until an endpoint is chosen');
    await page.click('[data-testid="endpoint-row"][data-name="GET /articles"]');
    await page.waitForSelector('[data-testid="waits"]:not([hidden])');
    assert.equal(await page.textContent('[data-testid="waits-title"]'), 'GET /articles');
    assert.deepEqual(await page.locator('[data-testid="waits-bar"] > span').evaluateAll((parts) => parts.map((p) => p.getAttribute('data-part'))), [
      'cpu',
      'database',
      'http',
    ]);
    assert.match(
      (await page.textContent('[data-testid="waits-text"]')) ?? '',
      /^47\.0ms a request: CPU 5\.00ms · database 40\.0ms \(7 database calls a request, at most 9\) · HTTP calls 5\.00ms$/,
    );
    assert.match(
      (await page.textContent('[data-testid="repeated"]')) ?? '',
      /^Repeated in one request: SELECT "id", "name" FROM "Authors" WHERE "id" = \? — run up to 8 times/,
    );
    const calls = page.locator('[data-testid="call-row"]');
    assert.deepEqual(await calls.evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-category'), r.getAttribute('data-repeated')])), [
      ['database', 'true'],
      ['http', 'false'],
      ['database', 'false'],
    ]);
    const spans = page.locator('[data-testid="waterfall-span"]');
    assert.equal(await spans.count(), 11);
    assert.deepEqual(await spans.evaluateAll((rows) => rows.slice(0, 2).map((r) => [r.getAttribute('data-category'), r.getAttribute('data-depth')])), [
      ['request', '0'],
      ['database', '1'],
    ]);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.locator('[data-testid="waits"]').screenshot({ path: path.join(ARTIFACTS, 'report-waits.png') });
    await spans.nth(3).click();
    assert.match((await page.textContent('[data-testid="flame-title"]')) ?? '', /^Slowest request of GET \/articles \(57\.0ms\)/);
    assert.equal(await frameNamed(page, 'listArticles').count(), 1, "the request's samples");
    assert.deepEqual(errors, []);
    await page.close();
  });
});
