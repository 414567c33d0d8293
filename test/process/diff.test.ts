/**
 * `pyro-run diff` as a CI job uses it, on real recordings of the example shop: one with the
 * checkout's hot function made 30% slower (SHOP_PRICE_CART_WORK=1.3) is told apart from the base —
 * that endpoint first, beyond the noise, that function first among its changes, `--fail-on` exits
 * 1 — and two recordings of the same code show nothing beyond the noise, and `--fail-on` exits 0.
 *
 * The three recordings are made at once, side by side under one load driver
 * (support/shop-side-by-side.ts): a 2-core machine shared with other work drifts between one run
 * and the next by more than the effect looked for.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { runCli } from '../support/child.js';
import { scratchDirs } from '../support/scratch.js';
import { recordShops } from '../support/shop-side-by-side.js';

const { fresh } = scratchDirs('pyro-run-diff-');

async function diff(args: string[]) {
  const child = runCli(['diff', ...args]);
  const exit = await child.exit(60_000);
  return { code: exit.code, stdout: child.stdout, stderr: child.stderr };
}

interface DiffJson {
  endpoints: {
    name: string;
    beyondNoise: boolean;
    metrics: { cpuPerRequest?: { relativeChange: number; beyondNoise: boolean } };
    functions: { function: { name: string; app: boolean } }[];
  }[];
  broken: { endpoint: string; metric: string; rule: string }[];
}

describe('pyro-run diff on recordings of the example shop', { timeout: 240_000 }, () => {
  let runs: Record<'base' | 'same' | 'slower', string>;
  before(async () => {
    // Base, the same code again, priceCart 30% slower.
    runs = await recordShops(fresh(), { base: '1', same: '1', slower: '1.3' });
  });

  it('the endpoint whose hot function got 30% slower comes first, beyond the noise, with that function first; --fail-on cpu-per-request>+10% exits 1 and says why', async (t) => {
    const text = await diff([runs.base, runs.slower]);
    t.diagnostic(`pyro-run diff base slower:\n${text.stdout}`);
    assert.equal(text.code, 0, text.stderr);
    const lines = text.stdout.split('\n');
    const firstEndpoint = lines.find((line) => / — .* requests, /.test(line));
    assert.match(firstEndpoint ?? '', /^POST \/checkout — .* beyond the noise$/, text.stdout);
    const firstFunction = lines[lines.findIndex((line) => line.startsWith('  Self CPU per request')) + 1];
    assert.match(firstFunction ?? '', /^ {4}priceCart \(server\.mjs:\d+\) /, text.stdout);

    const json = await diff([runs.base, runs.slower, '--json', '--fail-on', 'cpu-per-request>+10%']);
    assert.equal(json.code, 1, json.stderr);
    const result = JSON.parse(json.stdout) as DiffJson;
    const [checkout] = result.endpoints;
    assert.equal(checkout?.name, 'POST /checkout');
    assert.ok(checkout.beyondNoise && checkout.metrics.cpuPerRequest?.beyondNoise, JSON.stringify(checkout.metrics));
    assert.ok((checkout.metrics.cpuPerRequest?.relativeChange ?? 0) > 0.1, JSON.stringify(checkout.metrics));
    assert.equal(checkout.functions[0]?.function.name, 'priceCart');
    assert.deepEqual(
      result.broken.map((b) => [b.endpoint, b.metric, b.rule]),
      [['POST /checkout', 'cpuPerRequest', 'cpu-per-request>+10%']],
    );
    assert.match(
      json.stderr,
      /^pyro-run diff: POST \/checkout: CPU per request [\d.]+[µm]s → [\d.]+[µm]s \(\+[\d.]+[µm]s, \+\d+%\) breaks cpu-per-request>\+10%\n$/,
    );
  });

  it('two recordings of the same code: no endpoint beyond the noise, --fail-on cpu-per-request>+10% exits 0', async (t) => {
    const text = await diff([runs.base, runs.same, '--fail-on', 'cpu-per-request>+10%']);
    t.diagnostic(`pyro-run diff base same:\n${text.stdout}`);
    assert.equal(text.code, 0, text.stderr);
    assert.equal(text.stderr, '');
    assert.match(text.stdout, /\nNone of the 2 endpoints in both runs changed beyond the noise\.\n/);
    assert.doesNotMatch(text.stdout, /beyond the noise\n/);
  });
});
