/**
 * The newcomer's path end to end: `npm run demo` runs the example shop through pyro-run in local
 * mode under load and builds the report; the page, opened in a real Chromium, shows each
 * endpoint's own hot function at the top of its flame graph.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { isAgentFile } from '../support/agent-files.js';
import { pathToFileURL } from 'node:url';
import type { BrowserContext } from 'playwright-core';
import { frames, launchBrowser, openReport } from '../support/browser.js';
import { repoRoot, runNode } from '../support/child.js';
import { aggregateRun } from '../../src/report/aggregate.js';
import { loadRunSync } from '../../src/report/load-run.js';
import { skipUnless } from '../support/installed.js';

const base = mkdtempSync(path.join(tmpdir(), 'pyro-run-demo-'));
let context: BrowserContext | undefined;

after(async () => {
  await context?.close();
  rmSync(base, { recursive: true, force: true });
});

test('npm run demo records the shop and its report shows each endpoint’s hot function', { timeout: 120_000, skip: skipUnless('chromium') }, async (t) => {
  const out = path.join(base, 'data');
  // A sample every 1 ms (the demo's app inherits its env), not the default 10 ms: in 3 s of load
  // the checkout's priceCart had ~17 samples at 10 ms, a handful of them deciding its place among
  // the top three.
  const demo = runNode([path.join(repoRoot, 'examples/demo.mjs')], {
    env: { DEMO_OUT: out, DEMO_SECONDS: '3', PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS: '1000' },
    cwd: base,
  });
  const exit = await demo.exit(90_000);
  assert.equal(exit.code, 0, demo.stderr);

  // The app's exit summary: endpoints by CPU with their top self-time functions.
  assert.match(demo.stderr, /POST \/checkout .*priceCart/);
  assert.match(demo.stderr, /GET \/search .*rankResults/);
  const runs = readdirSync(out).filter((name) => !name.startsWith('.'));
  assert.equal(runs.length, 1);
  const report = path.join(out, runs[0]!, 'report.html');
  assert.ok(existsSync(report));
  assert.ok(demo.stdout.includes(report), `the report path is printed:\n${demo.stdout}`);
  assert.equal((demo.stdout + demo.stderr).match(/^Endpoint +Count +p50/gm)?.length, 1, `the endpoint table once:\n${demo.stdout}${demo.stderr}`);

  context = await launchBrowser(path.join(base, 'profile'));
  const { page, requests, errors } = await openReport(context, pathToFileURL(report).href);
  const hotByEndpoint: [string, string][] = [
    ['POST /checkout', 'priceCart'],
    ['GET /search', 'rankResults'],
    ['GET /products/:id', 'recommend'],
  ];
  for (const [endpoint, hot] of hotByEndpoint) {
    await page.click(`[data-testid="endpoint-row"][data-name="${endpoint}"]`);
    await page.waitForSelector(`[data-testid="flame-title"]:has-text("${endpoint}")`);
    const drawn = (await frames(page)).filter((f) => !f.ancestor).sort((a, b) => b.self - a.self);
    const top = drawn.slice(0, 3).map((f) => f.name);
    t.diagnostic(
      `${endpoint}: top self time ${drawn
        .slice(0, 4)
        .map((f) => `${f.name} ${(f.self / 1e6).toFixed(1)} ms`)
        .join(', ')}`,
    );
    assert.ok(top.includes(hot), `${endpoint}: top self-time frames ${top.join(', ')} should include ${hot}`);
  }
  assert.deepEqual(errors, []);
  assert.deepEqual(
    requests.filter((url) => !url.startsWith('file:')),
    [],
  );

  // What the report lists is the app's code by name: no anonymous function without its file and
  // line, and no frame of the agent's inside a stack (only its own leaf, named by its module).
  const aggregates = aggregateRun(loadRunSync(path.join(out, runs[0]!)));
  const name = (frame: number) => aggregates.strings[aggregates.frames.name[frame] as number] as string;
  const file = (frame: number) => aggregates.strings[aggregates.frames.file[frame] as number] as string;
  const used = new Set([...Object.values(aggregates.trees!.process)].flatMap((tree) => tree.frame.filter((frame) => frame >= 0)));
  for (const frame of used) {
    assert.doesNotMatch(name(frame), /^\(anonymous/, `${name(frame)} in ${file(frame)}`);
    assert.ok(!isAgentFile(file(frame)), `an agent frame in a stack: ${name(frame)}`);
  }
  for (const endpoint of aggregates.endpoints) {
    for (const self of endpoint.topSelf) assert.doesNotMatch(name(self.frame), /^\(anonymous/, endpoint.name);
  }
});
