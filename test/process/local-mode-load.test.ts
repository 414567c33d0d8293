/**
 * Local mode under load (issue 14), CI-sized: the example shop recording through the real CLI
 * into a cap small enough that span details fill their share of it. The profiles must survive
 * whole, every request must be counted exactly, and the report and the exit summary must say what
 * was kept and what was summarised.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { aggregateRun } from '../../src/report/aggregate.js';
import { loadRunSync } from '../../src/report/load-run.js';
import { repoRoot, runCli } from '../support/child.js';
import { load } from '../support/load.js';
import { readRecording } from '../support/read-recording.js';
import { scratchDirs } from '../support/scratch.js';

const SHOP = path.join(repoRoot, 'examples/express/server.mjs');
const { fresh } = scratchDirs('pyro-run-load-');

test('under load into a small cap: spans fill their share, no profile window is dropped, every request is counted, the summary says what is partial', async () => {
  const out = fresh();
  const capMb = 0.3;
  const app = runCli(['--out', out, '--max-run-size', String(capMb), '--flush-interval', '1000', SHOP], { env: { PORT: '0' } });
  const base = `http://127.0.0.1:${(await app.line(/listening (\d+)/))[1]}`;
  const paths = ['/products/7', '/search?q=red%20mug'];
  const requests = 4000;
  const sent = await load(base, (i) => paths[i % paths.length]!, requests, 16);
  app.process.kill('SIGTERM');
  await app.exit();

  const run = readRecording(out);
  const { counts } = run.manifest;
  assert.ok(counts.droppedSpans > 0, `span details filled their share of the cap: ${JSON.stringify(counts)}`);
  assert.equal(counts.droppedWindows, 0, 'no profile window was dropped');
  assert.ok(counts.windows >= 2, `profile windows recorded: ${counts.windows}`);
  assert.equal(run.profiles.length, counts.profileFiles);
  assert.ok(run.bytesOnDisk <= capMb * 1024 * 1024, `${run.bytesOnDisk} bytes on disk`);

  // Exact counts, per endpoint, whatever was kept.
  const counted = (name: string) => run.manifest.endpoints.find((endpoint) => endpoint.name === name && endpoint.kind === 2)?.count;
  assert.equal(counted('GET /products/:id'), sent.filter((p) => p.startsWith('/products')).length);
  assert.equal(counted('GET /search'), sent.filter((p) => p.startsWith('/search')).length);

  const aggregates = aggregateRun(loadRunSync(run.dir), { trees: false });
  const products = aggregates.endpoints.find((endpoint) => endpoint.name === 'GET /products/:id');
  assert.equal(products?.count, requests / 2);
  assert.ok((products?.cpuNs ?? 0) > 0, 'the report shows CPU for the endpoint');
  assert.ok(aggregates.run.spans < aggregates.run.spansEnded, 'details of some spans only');
  assert.match(
    app.stderr,
    /\nPartial: spans: [\d,]+ of [\d,]+ kept \([\d,]+ summarised under load, [\d,]+ past the size cap or a full disk\); endpoint counts and percentiles cover all[;\n]/,
  );
  assert.equal(app.stderr.match(/further span details are not recorded/g)?.length, 1, app.stderr);
});
